"""kernelsketch.distributed"""
