#!/usr/bin/env bash
# Regenerates the newest migration (for work in progress, before it lands): removes it and its snapshot and journal
# entry, then lets drizzle-kit generate it again from the schemas under the same name. Serialised with flock, since
# several people (or agents) may call it at once on one checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec 9>.migration.lock
flock 9
name=$(node -e "const j=require('./drizzle/meta/_journal.json');const e=j.entries.pop();console.log(e.tag)")
idx=${name%%_*}
rest=${name#*_}
rm -f "drizzle/${name}.sql" "drizzle/meta/${idx}_snapshot.json"
node -e "const fs=require('fs');const p='./drizzle/meta/_journal.json';const j=JSON.parse(fs.readFileSync(p));j.entries.pop();fs.writeFileSync(p,JSON.stringify(j,null,2)+'\n')"
npx drizzle-kit generate --name "$rest"
rm -rf .data
