#!/usr/bin/env bash
# The tracked tree (~7.5 MB) and the toolchain (.tc/tc.tar.xz, ~59 MB) together pass the 64 MiB a device call
# carries. Before a call, move aside the tracked results no device step reads (the fuzzer's files, figures,
# the defect sweep's table) into the git-ignored .cache/; after it, put them back. While they are out git is
# told to skip them (skip-worktree), so a `git commit -a` in between does not delete them.
#
#   bash bench/carry_aside.sh out    # then the device call
#   bash bench/carry_aside.sh in
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
archive=.cache/carry_aside.tar
paths=('bench/results/*fuzz*' 'bench/results/*.png' 'docs/tutorials/img' 'bench/results/defect_sweep.csv')
case "${1:-}" in
out)
  [ ! -e "$archive" ] || { echo "$archive exists: run 'in' first" >&2; exit 1; }
  mkdir -p .cache
  git ls-files -z -- "${paths[@]}" | tar --null -T - -cf "$archive"
  git ls-files -z -- "${paths[@]}" | xargs -0 git update-index --skip-worktree
  git ls-files -z -- "${paths[@]}" | xargs -0 rm -f
  echo "moved aside: $(tar -tf "$archive" | wc -l) files; tracked bytes now $(git ls-files -z | xargs -0 cat 2>/dev/null | wc -c)"
  ;;
in)
  [ -e "$archive" ] || { echo "nothing aside ($archive)" >&2; exit 1; }
  tar -xf "$archive"
  git ls-files -z -- "${paths[@]}" | xargs -0 git update-index --no-skip-worktree
  rm -f "$archive"
  git status --short | head
  ;;
*)
  echo "usage: bench/carry_aside.sh out|in" >&2; exit 2
  ;;
esac
