#!/usr/bin/env python3
"""Runs the shell examples of README.md and Docs/*.md that can run without hardware, and
checks their output where the page shows it.

Examples are the lines of ```sh blocks, and the `$ `-lines of plain ``` blocks, whose
following lines (up to the next `$ `) are the output the page promises: stdout and stderr
as a terminal shows them (a `$ `-line followed by none shows no output, so none is
checked). An output line `...` or `…` stands for any lines; digits with a
decimal point (timings) match any such number. An example runs when it needs no reader:
a `virtual:` or `replay:` device, a command that talks to no card, or a reader emulator
that runs here (`felica-sim rcs380`/`rcs956` with umockdev, tshark for the dissector).
Each page runs in a scratch directory of its own, in page order, seeded with the recorded
traces of Tests/Traces (the pages record them from readers this machine does not have).

Usage: doc-examples.py REPO_ROOT   (felica and felica-sim on PATH)
Exit status 1 when an example fails or shows other output than the page.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = os.path.abspath(sys.argv[1])
CARD_COMMANDS = {"poll", "dump", "read", "balance", "history", "watch", "add", "ndef", "write", "verify"}


def examples(path):
    """(line number, command, expected output or None) in page order."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        lang = fence[3:].strip()
        j = i + 1
        block = []
        while j < len(lines) and not lines[j].strip().startswith("```"):
            block.append((j + 1, lines[j]))
            j += 1
        if lang == "sh":
            pending = ""
            for n, line in block:
                text = pending + line
                if text.rstrip().endswith("\\"):
                    pending = text.rstrip()[:-1] + " "
                    continue
                pending = ""
                command = strip_comment(text).strip()
                if command:
                    out.append((n, command, None))
        elif lang == "":
            k = 0
            while k < len(block):
                n, line = block[k]
                if line.startswith("$ "):
                    expected = []
                    k += 1
                    while k < len(block) and not block[k][1].startswith("$ "):
                        expected.append(block[k][1])
                        k += 1
                    while expected and expected[-1].strip() == "":
                        expected.pop()
                    # A command shown with no output (one step of a session) is not checked.
                    out.append((n, line[2:].strip(), expected or None))
                else:
                    k += 1
        i = j + 1
    return out


def strip_comment(line):
    """The line without a trailing `# comment` (outside quotes)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k]
    return line


def have(program):
    return shutil.which(program) is not None


def why_not(command):
    """Why the example cannot run here; None when it can."""
    if re.search(r"<[a-z.:|-]+>|/dev/pts/N|\bN\b", command):
        return "a placeholder"
    if "sudo" in command or command.startswith(("scripts/", "swift ")):
        return "installs, builds or runs the whole suite"
    words = command.split()
    if words[0] in ("mkdir", "cp", "(head"):
        return None  # making a directory or a file the next example uses
    if words[0] == "tshark":
        return None if have("tshark") else "tshark is not installed"
    if words[0] == "felica-sim":
        if len(words) > 1 and words[1] in ("rcs380", "rcs956") and "--" in words:
            return None if have("umockdev-run") else "umockdev is not installed"
        return "an emulator that serves until stopped"
    if words[0] != "felica":
        return "not a felica command"
    device = re.search(r"--device[ =]'?([^ ']+)", command)
    kinds = ("virtual:", "replay:")
    sub = [w for w in words[1:] if not w.startswith("-")][:2]
    if sub[:1] in (["devices"], ["doctor"]):
        return "depends on the readers of the machine"
    if sub[:1] == ["write"] and "--dry-run" in words:
        return None  # prints the frames it would send; opens no reader
    if sub and (sub[0] in CARD_COMMANDS or sub[:2] == ["log", "add"] or sub[:2] == ["bench", "order"] and device):
        if not device or not device.group(1).startswith(kinds):
            return "needs a reader"
        if sub[0] == "watch" and "--count" not in command:
            return "runs until Ctrl-C"
    return None


def matches(expected, actual):
    """Whether the output shown matches the output printed; else the first line that differs."""
    number = re.compile(r"\d+\.\d+")

    def same(a, b):
        return number.sub("#", a.rstrip()) == number.sub("#", b.rstrip())

    def walk(e, a):
        if e == len(expected):
            return None if a == len(actual) else ("(end of the page's output)", actual[a])
        if expected[e].strip() in ("...", "…"):
            for k in range(a, len(actual) + 1):
                if walk(e + 1, k) is None:
                    return None
            return (expected[e + 1] if e + 1 < len(expected) else "(end)", "(no line matches)")
        if a < len(actual) and same(expected[e], actual[a]):
            return walk(e + 1, a + 1)
        return (expected[e], actual[a] if a < len(actual) else "(end of output)")

    return walk(0, 0)


def main():
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "Docs", "*.md")))
    ran = skipped = failed = 0
    reasons = {}
    for page in pages:
        name = os.path.relpath(page, root)
        scratch = tempfile.mkdtemp(prefix="doc-examples-")
        for trace in glob.glob(os.path.join(root, "Tests", "Traces", "*.jsonl")):
            shutil.copy(trace, scratch)
        for d in ("Tests", "Wireshark", "Docs"):
            os.symlink(os.path.join(root, d), os.path.join(scratch, d))
        env = dict(os.environ, FELICA_DEVICE="", NO_COLOR="1", COLUMNS="100", HOME=scratch, XDG_DATA_HOME=scratch + "/data")
        for line, command, expected in examples(page):
            reason = why_not(command)
            if reason:
                skipped += 1
                reasons.setdefault(reason, []).append(f"{name}:{line}")
                continue
            ran += 1
            try:
                p = subprocess.run(["bash", "-c", command], cwd=scratch, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=120)
                output, status = p.stdout.decode("utf-8", "replace"), p.returncode
            except subprocess.TimeoutExpired:
                output, status = "(timed out after 120 s)", -1
            shown_error = expected is not None and any(l.startswith("Error:") for l in expected)
            problem = None
            if status != 0 and not shown_error:
                problem = f"exit {status}:\n{output}"
            elif status == 0 and shown_error:
                problem = "succeeded, but the page shows an error"
            elif expected is not None:
                diff = matches(expected, output.rstrip("\n").split("\n") if output else [])
                if diff:
                    problem = f"output differs from the page:\n  page:   {diff[0]}\n  actual: {diff[1]}\n--- whole output:\n{output}"
            if problem:
                failed += 1
                print(f"FAIL {name}:{line}: {command}\n  {problem}", file=sys.stderr)
            else:
                print(f"  ok: {name}:{line}: {command}" + ("" if expected is None else " (output as shown)"), file=sys.stderr)
        shutil.rmtree(scratch, ignore_errors=True)
    for reason, where in sorted(reasons.items()):
        print(f"  skipped ({reason}): {len(where)}", file=sys.stderr)
    print(f"doc examples: {ran} run, {failed} failed, {skipped} skipped", file=sys.stderr)
    return 1 if failed or ran == 0 else 0


sys.exit(main())
