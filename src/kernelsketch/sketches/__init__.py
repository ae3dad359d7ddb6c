"""kernelsketch.sketches"""
