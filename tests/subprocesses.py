"""Child processes that can be interrupted, however the test run itself was started.

A suite started with SIGINT ignored (``./dev test &`` from a script, ``nohup``) hands that
disposition to every child: the interrupt tests' SIGINT would then be lost and the child
finish normally.  ``popen_kwargs`` gives each child the default handler back before it
execs, so Python installs its KeyboardInterrupt handler as it does at a terminal.
"""

import signal


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: keyword arguments for ``subprocess.Popen`` / ``subprocess.run`` of a child that a test interrupts
INTERRUPTIBLE = {"preexec_fn": _default_sigint}
