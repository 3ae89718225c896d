#!/usr/bin/env bash
# Docs/architecture.md stays true: its module table lists exactly the targets of
# Package.swift (from `swift package dump-package`), each with the dependencies the
# manifest gives it as "may import"; and every `import` line under Sources/, Examples/,
# Benchmarks/ and Tests/TestSupport names a declared dependency or one of the toolchain's
# modules (Glibc, Synchronization; Foundation only in the test tooling, TestSupport and
# Benchmarks). Test targets are not in the table. Lines inside a multi-line string literal
# (the USB bridge's Python) are text, not imports.
source "$(dirname "$0")/lib.sh"
stage_workdir

if ! swift package dump-package >"$work/package.json" 2>"$work/dump.err"; then
  fail "swift package dump-package failed: $(head -n 5 "$work/dump.err")"
  stage_end
fi

python3 - "$work/package.json" Docs/architecture.md <<'EOF' >"$work/verdicts" 2>&1
import json, os, re, sys

package = json.load(open(sys.argv[1]))
doc = open(sys.argv[2], encoding="utf-8").read()
toolchain = {"Glibc", "Synchronization"}
tooling = {"TestSupport", "Benchmarks"}

targets = {}
for t in package["targets"]:
    if t["type"] == "test":
        continue
    deps = []
    for d in t.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in d:
                deps.append(d[kind][0])
    path = t.get("path") or ("Sources/" + t["name"])
    targets[t["name"]] = (set(deps), path)

# The module table: | `Name` | holds | `A`, `B` |
section = doc.split("## Modules", 1)[1].split("\n## ", 1)[0]
table = {}
for line in section.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or not cells[0].startswith("`"):
        continue
    name = cells[0].strip("`")
    table[name] = set(re.findall(r"`([A-Za-z0-9_-]+)`", cells[2]))

for name in sorted(set(targets) - set(table)):
    print(f"FAIL Docs/architecture.md does not list the target {name} of Package.swift")
for name in sorted(set(table) - set(targets)):
    print(f"FAIL Docs/architecture.md lists {name}, which Package.swift does not declare")
for name in sorted(set(targets) & set(table)):
    deps, _ = targets[name]
    if table[name] != deps:
        print(f"FAIL Docs/architecture.md: {name} may import {sorted(table[name])}, Package.swift gives {sorted(deps)}")
    else:
        print(f"ok {name}: may import what Package.swift gives it")

imp = re.compile(r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)")
for name, (deps, path) in sorted(targets.items()):
    if not os.path.isdir(path):
        continue
    wrong = []
    allowed = deps | toolchain | ({"Foundation"} if name in tooling else set())
    for root, _, files in os.walk(path):
        for f in files:
            if not f.endswith(".swift"):
                continue
            literal = None  # the closing delimiter of the multi-line string a line is in
            for n, line in enumerate(open(os.path.join(root, f), encoding="utf-8"), 1):
                text = line.strip()
                if literal is not None:
                    if text.startswith(literal):
                        literal = None
                    continue
                m = imp.match(line)
                if m and m.group(1) not in allowed:
                    wrong.append(f"{os.path.join(root, f)}:{n}: import {m.group(1)}")
                raw = re.search(r'(#+)"""$', text)
                if raw:
                    literal = '"""' + raw.group(1)
                elif text.endswith('"""') and text.count('"""') == 1:
                    literal = '"""'
    if wrong:
        for w in wrong:
            print(f"FAIL {name} imports what Package.swift does not give it: {w}")
    else:
        print(f"ok {name}: every import is a declared dependency or the toolchain's")
EOF
status=$?
while read -r verdict rest; do
  case "$verdict" in
    ok) QUIET_PASS=1 pass "$rest" ;;
    FAIL) fail "$rest" ;;
    NOTE) note "note: $rest" ;;
    *) fail "checker: $verdict $rest" ;;
  esac
done <"$work/verdicts"
((status == 0)) || fail "the checker ended with status $status"
((checks > 0)) || fail "the checker printed nothing"

# Library errors name no option or command of the command line (`--trace`, `felica
# devices`): felica adds those when it prints the error (FeliCaCLI/ErrorHints.swift). Lines
# that build an error or its reason in a library module are checked (one-line literals;
# FeliCaDiagnosis is what `felica doctor` prints, so it names them by design).
cli_words=$(grep -rnE '(Error\(|reason = ).*(--[a-z]|`felica [a-z])' Sources --include='*.swift' |
  grep -vE '^Sources/(FeliCaCLI|FeliCaSimCommands|FeliCaDiagnosis|felica|felica-sim)/' || true)
if [[ -n $cli_words ]]; then
  fail "a library error names a command-line word (the CLI adds it in ErrorHints): $cli_words"
else
  pass "library errors name no command-line option or command"
fi
note "$checks checks"
stage_end
