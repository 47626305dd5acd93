"""Build hook: install the repository's root ``cli.py`` as ``meta_eval/cli.py`` (the module ``meta_eval.cli``).

Everything else is declared in ``pyproject.toml``; this file only exists because setuptools' ``package-dir`` maps
packages, not a single module, into another package (see ``meta_eval/_layout.py``).
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "meta_eval", "cli.py")
        self.mkpath(os.path.dirname(target))
        self.copy_file("cli.py", target, preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, "meta_eval", "cli.py")]


setup(cmdclass={"build_py": BuildPy})
