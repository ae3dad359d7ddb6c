"""kernelsketch.maps"""
