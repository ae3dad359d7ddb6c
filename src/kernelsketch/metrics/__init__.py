"""kernelsketch.metrics"""
