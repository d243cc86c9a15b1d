"""examples/demo.sh, as the README tells a new user to run it: one line per
step and the verdict, its full output in the log it names (issue 53)."""
import os
import subprocess

from conftest import ROOT


def test_the_demo_is_quiet_and_matches():
    p = subprocess.run([os.path.join(ROOT, "examples", "demo.sh")], capture_output=True,
                       text=True, timeout=1800)
    lines = (p.stdout + p.stderr).splitlines()
    assert p.returncode == 0, "\n".join(lines[-30:])
    assert len(lines) <= 20, "\n".join(lines)
    assert lines[0] == f"[demo] full output of every step: {ROOT}/out/demo.log"
    assert lines[-1].startswith("max relative difference vs PyTorch eager: ") and \
        lines[-1].endswith("-> MATCH (<= 1e-5)"), lines[-1]
    steps = [ln for ln in lines if ln.startswith("[demo] ")][1:]
    assert len(steps) == 5 and all(ln.rstrip().endswith("s") for ln in steps), steps
    # What the steps printed is kept, not lost.
    log = open(os.path.join(ROOT, "out", "demo.log")).read()
    assert "dynoc capture report" in log and "wrote" in log
