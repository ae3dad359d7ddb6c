"""kernelsketch.cli"""
