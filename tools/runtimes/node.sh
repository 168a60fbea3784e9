#!/usr/bin/env bash
# Installs a Node.js line from the npm registry's `node` package (no other download) into .runtimes/node-<major>
# of this checkout, unless that line is already there, and prints the folder that holds its `node` binary.
#   PATH="$(tools/runtimes/node.sh 24):$PATH" npm run test:db     # the medium and e2e suites on Node.js 24
# A line that is not given exactly (node.sh 24) takes the newest release of it.
set -euo pipefail
major="${1:?usage: tools/runtimes/node.sh <major line, e.g. 24>}"
[[ "$major" =~ ^[0-9]+$ ]] || { echo "node.sh: '$major' is not a major line" >&2; exit 2; }
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$root/.runtimes/node-$major"
bin="$dir/node_modules/node/bin"
installed() { [ -x "$bin/node" ] && [ "$("$bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "$major" ]; }
if ! installed; then
  rm -rf "$dir"
  mkdir -p "$dir"
  npm install --no-save --no-audit --no-fund --no-package-lock --loglevel=error --prefix "$dir" "node@$major" >&2
  installed || { echo "node.sh: node@$major did not install a working Node.js $major" >&2; exit 1; }
fi
echo "$bin"
