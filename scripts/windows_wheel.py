"""Makes a Windows wheel's `toolshelf-mcp` command an .exe: `uvx toolshelf-mcp` runs the command
named like the package, and Windows runs no shell script. maturin's wheel carries the shell
script every wheel has (packaging/pypi/data); this puts a copy of `toolshelf.exe` in its place
and packs the wheel again (its RECORD rewritten by `wheel pack`).

Usage: windows_wheel.py WHEEL (replaced in place).
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

wheel = sys.argv[1]
with tempfile.TemporaryDirectory() as work:
    subprocess.run([sys.executable, "-m", "wheel", "unpack", "--dest", work, wheel], check=True,
                   stdout=subprocess.DEVNULL)
    [unpacked] = glob.glob(os.path.join(work, "*"))
    [scripts] = glob.glob(os.path.join(unpacked, "*.data", "scripts"))
    os.remove(os.path.join(scripts, "toolshelf-mcp"))
    shutil.copy(os.path.join(scripts, "toolshelf.exe"), os.path.join(scripts, "toolshelf-mcp.exe"))
    os.remove(wheel)
    subprocess.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", os.path.dirname(wheel),
                    unpacked], check=True, stdout=subprocess.DEVNULL)
print(f"{wheel}: toolshelf-mcp.exe beside toolshelf.exe")
