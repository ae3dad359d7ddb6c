"""kernelsketch.cluster"""
