"""kernelsketch.experiments"""
