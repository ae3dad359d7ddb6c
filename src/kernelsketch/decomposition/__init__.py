"""kernelsketch.decomposition"""
