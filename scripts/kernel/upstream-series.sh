#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make upstream-series: the kernel series as mail for its maintainers.
#
#   scripts/kernel/upstream-series.sh [--preview] [BASE...]    (BASE: 7.3 6.12; default both)
#
# For each base, from its series as the test kernel's git tree holds it
# ('make kernel KBASE=<base>'; every commit is checked against
# patches/<base>/ by patch id), into build/upstream/<base>/<set>/:
#
#  - identity: each commit's author becomes the submitter's git identity
#    (git var GIT_AUTHOR_IDENT: user.name and user.email, or
#    GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL), and the submitter's Signed-off-by
#    follows the patch's Assisted-by: trailer (the patches carry no
#    Signed-off-by: an AI agent must not add one, the kernel's
#    Documentation/process/coding-assistants.rst). A placeholder (an
#    address at example.*, *.example, *.invalid, localhost or noreply, or
#    the series' own "rpcrdma_cm developers") is refused: the Developer's
#    Certificate of Origin is a person's. --preview writes the series with
#    the identity the repository has and no Signed-off-by, for reading
#    only: every subject says PREVIEW and the report says it is not mail.
#  - sets: patches/upstream/sets-<base> cuts the series into the sets that
#    go to different maintainers, each with its subject prefix and, when it
#    has more than one patch, a cover letter from
#    patches/upstream/cover-<base>-<set>.txt. A set's base-commit is the
#    source it was built on; the sets before it are prerequisite-patch-id
#    lines, as git format-patch --base writes them, except for a set whose
#    name ends in "fixes": it goes to its own tree, so its patches are
#    re-applied on the base alone (no prerequisite; one that does not
#    apply there fails the run).
#  - recipients: each patch gets To: (the maintainers) and Cc: (reviewers
#    and lists) from the tree's scripts/get_maintainer.pl; a cover letter
#    gets the union of its patches'.
#  - checks: checkpatch.pl --strict on every patch; its trailers all in
#    the block git interpret-trailers parses, and no Cc: stable on a
#    server (svcrdma:, nfsd:) patch; every Fixes: tag
#    checked, in LINUX_GIT (an upstream clone: the commit exists and its
#    subject is the tag's) or else against patches/upstream/fixes-evidence
#    (what is known of each commit, and from where); a tag found in
#    neither fails the run, and so does a placeholder address left anywhere.
#  - MAINTAINERS: the in-tree user's entry for the Rust files (scripts/
#    in-tree-user.sh) gets the submitter as M: and, when
#    RPCRDMA_CM_RUST_REVIEWER names one ("Name <address>", a person who
#    agreed; placeholders refused), an R: line. Without it the report
#    says the entry has no Rust reviewer yet.
#  - 6.12 (stable): each patch gets "commit <id> upstream." from
#    STABLE_UPSTREAM_IDS (lines "subject<TAB>id") once mainline has it;
#    without it the report says the set waits for mainline.
#
# build/upstream/report.txt says, per patch: subject, recipients,
# checkpatch's verdict and each Fixes: tag's. Exit status: 0 when every
# check passed, 1 when one failed, 2 when the identity was refused or
# the input is missing.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

preview=0
bases=()
for a in "$@"; do
	case "$a" in
	--preview) preview=1 ;;
	7.3|6.12) bases+=("$a") ;;
	*) echo "usage: $0 [--preview] [7.3] [6.12]" >&2; exit 2 ;;
	esac
done
[ ${#bases[@]} -gt 0 ] || bases=(7.3 6.12)

UP=$RPCRDMA_CM_TOP/patches/upstream
OUT=$RPCRDMA_CM_TOP/build/upstream
# A placeholder: the series' own name, or an address under a name that
# RFC 2606 and RFC 6761 reserve (example, invalid, localhost, test), or
# one that takes no mail (noreply).
PLACEHOLDER='rpcrdma_cm developers|@([^ >]*[.@])?(example|invalid|localhost|test)([.][a-z]+)?>|noreply'

# The submitter: name and address from git, refused if a placeholder.
ident=$(git -C "$RPCRDMA_CM_TOP" var GIT_AUTHOR_IDENT 2>/dev/null) || ident=
ident=${ident% * *}
[ -z "$ident" ] && [ $preview = 1 ] && ident="Preview Only <preview@invalid>"
if [ -z "$ident" ]; then
	echo "upstream-series: no git identity: set user.name and user.email (git config)" >&2
	exit 2
fi
if echo "$ident" | grep -qiE "$PLACEHOLDER"; then
	if [ $preview = 0 ]; then
		echo "upstream-series: refused: '$ident' is a placeholder, not a person who can sign the" >&2
		echo "Developer's Certificate of Origin. Set your own user.name and user.email (git config)," >&2
		echo "or run with --preview to read the series without sending it." >&2
		exit 2
	fi
fi
reviewer=${RPCRDMA_CM_RUST_REVIEWER:-}
# One line "Name <address>", no placeholder, not the submitter.
reviewer_re='^[^<>[:cntrl:]]+ <[^<>@[:space:][:cntrl:]]+@[^<>[:space:][:cntrl:]]+>$'
if [ -n "$reviewer" ] && { [[ ! $reviewer =~ $reviewer_re ]] ||
	echo "$reviewer" | grep -qiE "$PLACEHOLDER" || [ "$reviewer" = "$ident" ]; }; then
	echo "upstream-series: refused: RPCRDMA_CM_RUST_REVIEWER='$reviewer' is no \"Name <address>\" of a person other than the submitter" >&2
	exit 2
fi
ident_name=${ident% <*}
ident_email=${ident##*<} ident_email=${ident_email%>}

rm -rf "$OUT"
mkdir -p "$OUT"
report=$OUT/report.txt
fail=0
say() { echo "$*" | tee -a "$report"; }
bad() { say "  FAIL: $*"; fail=1; }

say "upstream-series: $(date -u +%Y-%m-%d), repository $(git -C "$RPCRDMA_CM_TOP" rev-parse --short HEAD)"
say "submitter: $ident$([ $preview = 1 ] && echo " (PREVIEW: not mail)")"
say "Fixes: tags checked in: ${LINUX_GIT:-patches/upstream/fixes-evidence (no LINUX_GIT)}"

# fixes_check PATCH: every Fixes: tag of PATCH, checked; prints one line each.
fixes_check() {
	local line hash subject known
	while IFS= read -r line; do
		hash=$(echo "$line" | sed -n 's/^Fixes: \([0-9a-f]\{12,40\}\) ("\(.*\)")$/\1/p')
		subject=$(echo "$line" | sed -n 's/^Fixes: \([0-9a-f]\{12,40\}\) ("\(.*\)")$/\2/p')
		if [ -z "$hash" ]; then
			bad "malformed tag: $line"
			continue
		fi
		if [ -n "${LINUX_GIT:-}" ]; then
			known=$(git -C "$LINUX_GIT" log -1 --format=%s "$hash^{commit}" 2>/dev/null) || known=
			if [ "$known" = "$subject" ]; then
				say "  Fixes: $hash: in $LINUX_GIT with that subject"
			else
				bad "Fixes: $hash (\"$subject\"): ${known:+LINUX_GIT says \"$known\"}${known:-not in LINUX_GIT}"
			fi
			continue
		fi
		known=$(awk -F'\t' -v h="$hash" '$1 == substr(h, 1, 12) { print $2 "\t" $3 }' "$UP/fixes-evidence")
		if [ -z "$known" ]; then
			bad "Fixes: $hash: not in patches/upstream/fixes-evidence and no LINUX_GIT to check it"
		elif [ "${known%%$'\t'*}" != "$subject" ]; then
			bad "Fixes: $hash: the evidence names it \"${known%%$'\t'*}\", the tag \"$subject\""
		elif [ "${known#*$'\t'unverified}" != "$known" ] && [ $preview = 0 ]; then
			bad "Fixes: $hash: ${known#*$'\t'} (set LINUX_GIT to an upstream clone)"
		else
			say "  Fixes: $hash: ${known#*$'\t'}"
		fi
	done < <(grep '^Fixes:' "$1" || true)
	if ! grep -q '^Fixes:' "$1"; then
		case "$set" in
		*fixes) say "  note: a fix without a Fixes: tag${2:+ ($2)}" ;;
		esac
	fi
}

# trailers_check PATCH SUBJECT: every trailer-like line of the changelog
# (Fixes:, Cc:, Signed-off-by: and the like) is in the trailer block git
# parses (a blank line among them leaves the ones above it in the body,
# where no tool reads them), and a server patch (svcrdma:, nfsd:) carries
# no Cc: stable in mainline (the NFSD maintainer entry profile: the
# maintainers add stable tags themselves).
trailers_check() {
	local msg body parsed
	msg=$(awk '/^Subject:/ { s = 1 } s && /^---$/ { exit } s' "$1" | sed '1,/^$/d')
	body=$(grep -E '^([A-Za-z][A-Za-z0-9-]*-by|Fixes|Cc|Link|Closes): ' <<<"$msg" || true)
	parsed=$(git interpret-trailers --parse <<<"$msg")
	if [ "$body" = "$parsed" ]; then
		say "  trailers: $(grep -c . <<<"$parsed") parsed by git interpret-trailers"
	else
		bad "trailers: git interpret-trailers parses '$(echo "$parsed" | paste -sd'|')', the changelog has '$(echo "$body" | paste -sd'|')'"
	fi
	# (mainline only: a stable backport carries the upstream changelog,
	# which the maintainers may have given the tag)
	case "$base:$2" in
	7.3:svcrdma:* | 7.3:nfsd:* | 7.3:NFSD:*)
		if grep -qiE '^Cc: .*stable@(vger\.)?kernel\.org' <<<"$msg"; then
			bad "a server patch with Cc: stable (the NFSD maintainers add stable tags themselves)"
		fi
		;;
	esac
}

# recipients PATCH: "to" and "cc" lines for PATCH from get_maintainer.pl.
recipients() {
	(cd "$kdir" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --rolestats "$1" 2>/dev/null) |
		awk '/\((maintainer|supporter):/ { sub(/ \(.*/, ""); print "to " $0; next }
			NF { sub(/ \(.*/, ""); print "cc " $0 }'
}

# add_headers PATCH TO CC: To: and Cc: headers (comma-separated) after
# the Subject (its header block ends at the first empty line).
add_headers() {
	awk -v to="$2" -v cc="$3" '
		!done && /^$/ { if (to != "") print "To: " to; if (cc != "") print "Cc: " cc; done = 1 }
		{ print }' "$1" >"$1.new"
	mv "$1.new" "$1"
}

for base in "${bases[@]}"; do
	kbase_set "$base"
	kdir=$(RPCRDMA_CM_KBASE=$base "$RPCRDMA_CM_TOP/scripts/kernel/build-kernel.sh" --print-dir)
	[ -d "$kdir/.git" ] || { echo "upstream-series: no $base kernel tree ($kdir): run 'make kernel KBASE=$base'" >&2; exit 2; }
	say ""
	say "== $base: series patches/$base, tree $kdir"
	shopt -s nullglob
	files=("$KBASE_PATCHES"/*.patch)
	shopt -u nullglob
	root=$(git -C "$kdir" log --format=%H --grep="^Debian $KBASE_SOURCE_PKG\$" | tail -1)
	mapfile -t commits < <(git -C "$kdir" rev-list --reverse "$root..HEAD")
	if [ -z "$root" ] || [ ${#commits[@]} != ${#files[@]} ]; then
		echo "upstream-series: $kdir does not hold patches/$base (${#commits[@]} commits, ${#files[@]} patches): run 'make kernel KBASE=$base'" >&2
		exit 2
	fi
	for i in "${!files[@]}"; do
		a=$(git patch-id --stable <"${files[$i]}" | cut -d' ' -f1)
		b=$(git -C "$kdir" show "${commits[$i]}" | git patch-id --stable | cut -d' ' -f1)
		[ "$a" = "$b" ] || { echo "upstream-series: $kdir's commit $((i + 1)) is not ${files[$i]##*/}: run 'make kernel KBASE=$base'" >&2; exit 2; }
	done

	# The series again, with the submitter as author and signer, in a
	# bare clone that shares the tree's objects (the tree is untouched).
	work=$(mktemp -d)
	git -c init.defaultBranch=master clone -q --bare --shared "$kdir" "$work/k.git"
	G=(git --git-dir="$work/k.git")
	parent=$root
	new=()
	maintainers_at=
	for c in "${commits[@]}"; do
		"${G[@]}" log -1 --format=%B "$c" >"$work/msg"
		# The submitter certifies the DCO after the AI's attribution; a
		# preview is no one's and has none.
		[ $preview = 1 ] || grep -qxF "Signed-off-by: $ident_name <$ident_email>" "$work/msg" ||
			git interpret-trailers --in-place --trailer "Signed-off-by: $ident_name <$ident_email>" "$work/msg"
		tree=$("${G[@]}" rev-parse "$c^{tree}")
		# The Rust entry in MAINTAINERS gets its people here.
		if [ "$("${G[@]}" rev-parse "$c:MAINTAINERS")" != "$("${G[@]}" rev-parse "$root:MAINTAINERS")" ] &&
			"${G[@]}" show "$c:MAINTAINERS" | grep -xF "$RPCRDMA_CM_MAINTAINERS_HEAD" >/dev/null; then
			# (not grep -q: its early exit would fail the pipe under pipefail)
			blob=$("${G[@]}" show "$c:MAINTAINERS" |
				HEAD_LINE=$RPCRDMA_CM_MAINTAINERS_HEAD M_LINE="$ident_name <$ident_email>" R_LINE=$reviewer awk '
					{ print }
					$0 == ENVIRON["HEAD_LINE"] {
						getline next_line
						# Once: an entry that has an M: already keeps it.
						if (next_line !~ /^M:/) {
							print "M:\t" ENVIRON["M_LINE"]
							if (ENVIRON["R_LINE"] != "") print "R:\t" ENVIRON["R_LINE"]
						}
						print next_line
					}' |
				"${G[@]}" hash-object -w --stdin)
			GIT_INDEX_FILE=$work/index "${G[@]}" read-tree "$tree"
			GIT_INDEX_FILE=$work/index "${G[@]}" update-index --cacheinfo "100644,$blob,MAINTAINERS"
			tree=$(GIT_INDEX_FILE=$work/index "${G[@]}" write-tree)
			maintainers_at=$("${G[@]}" log -1 --format=%s "$c")
		fi
		parent=$(GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
			GIT_AUTHOR_DATE=$("${G[@]}" log -1 --format=%aD "$c") \
			GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
			"${G[@]}" commit-tree "$tree" -p "$parent" -F "$work/msg")
		new+=("$parent")
	done

	# The entry, if the series adds it, must reach the mail with its M:.
	if "${G[@]}" show "${new[-1]}:MAINTAINERS" | grep -xF "$RPCRDMA_CM_MAINTAINERS_HEAD" >/dev/null &&
		! "${G[@]}" show "${new[-1]}:MAINTAINERS" |
			awk -v h="$RPCRDMA_CM_MAINTAINERS_HEAD" '$0 == h { getline; print }' | grep '^M:' >/dev/null; then
		bad "MAINTAINERS \"$RPCRDMA_CM_MAINTAINERS_HEAD\" has no M: line"
	fi
	if [ -n "$maintainers_at" ]; then
		say "MAINTAINERS \"$RPCRDMA_CM_MAINTAINERS_HEAD\" (in \"$maintainers_at\"): M: $ident_name <$ident_email>"
		if [ -n "$reviewer" ]; then
			say "  R: $reviewer"
		else
			say "  no R: yet: Rust-for-Linux asks for a Rust reviewer of the Rust files; name one who agreed with RPCRDMA_CM_RUST_REVIEWER"
		fi
	fi

	while read -r set first last prefix; do
		case "$set" in ''|'#'*) continue ;; esac
		from=$((10#$first - 1)) to=$((10#$last - 1))
		start=$root
		[ $from -gt 0 ] && start=${new[$((from - 1))]}
		n=$((to - from + 1))
		end=${new[$to]}
		# A fixes set goes to its own tree and applies there alone: its
		# patches are re-applied on the base itself, so that the mail
		# names no other set as a prerequisite (and a set that needs
		# another fails here).
		if [[ $set == *fixes ]] && [ "$start" != "$root" ]; then
			start=$root end=$root
			for k in $(seq "$from" "$to"); do
				GIT_INDEX_FILE=$work/index "${G[@]}" read-tree "$end"
				"${G[@]}" diff-tree -p --binary "${new[$k]}^" "${new[$k]}" |
					GIT_INDEX_FILE=$work/index "${G[@]}" apply --cached ||
					{ bad "$set: $("${G[@]}" log -1 --format=%s "${new[$k]}") does not apply on the base without the earlier sets"; continue 2; }
				end=$(GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
					GIT_AUTHOR_DATE=$("${G[@]}" log -1 --format=%aD "${new[$k]}") \
					GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
					"${G[@]}" commit-tree "$(GIT_INDEX_FILE=$work/index "${G[@]}" write-tree)" -p "$end" \
					-m "$("${G[@]}" log -1 --format=%B "${new[$k]}")")
			done
		fi
		[ $preview = 1 ] && prefix="PREVIEW $prefix"
		dir=$OUT/$base/$set
		args=(-q --zero-commit --base="$root" --subject-prefix="$prefix" -o "$dir")
		[ $n -gt 1 ] && args+=(--cover-letter --thread)
		# The cover letter's From and every Message-ID come from these.
		GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
			GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
			"${G[@]}" format-patch "${args[@]}" "$start..$end"
		say ""
		say "-- $base $set: $n patch(es), [$prefix], base-commit: Debian $KBASE_SOURCE_PKG $KBASE_SOURCE_VERSION ($root)$([ "$start" = "$root" ] && echo ", no prerequisite")"
		all_to=() all_cc=()
		k=$from
		for p in "$dir"/*.patch; do
			case "$p" in *0000-cover-letter.patch) continue ;; esac
			subj=$("${G[@]}" log -1 --format=%s "${new[$k]}")
			k=$((k + 1))
			say "$(grep -m1 '^Subject:' "$p")"
			to_list=() cc_list=()
			while read -r role who; do
				if [ "$role" = to ]; then to_list+=("$who"); else cc_list+=("$who"); fi
			done < <(recipients "$p")
			# A backport goes to stable, the maintainers in copy.
			if [ "$base" = 6.12 ]; then
				cc_list=("${to_list[@]}" "${cc_list[@]}")
				to_list=("stable@vger.kernel.org")
			fi
			to=$(IFS=,; echo "${to_list[*]}" | sed 's/,/, /g')
			cc=$(IFS=,; echo "${cc_list[*]}" | sed 's/,/, /g')
			add_headers "$p" "$to" "$cc"
			all_to+=("${to_list[@]}") all_cc+=("${cc_list[@]}")
			say "  To: $to"
			say "  Cc: $cc"
			if [ "$base" = 6.12 ]; then
				id=
				[ -n "${STABLE_UPSTREAM_IDS:-}" ] && id=$(awk -F'\t' -v s="$subj" '$1 == s { print $2 }' "$STABLE_UPSTREAM_IDS")
				if [ -n "$id" ]; then
					sed -i "0,/^\$/{/^\$/a\\
commit $id upstream.\\

}" "$p"
					say "  stable: commit $id upstream."
				else
					say "  stable: waits for its mainline commit id (STABLE_UPSTREAM_IDS)"
				fi
			fi
			# A preview has no Signed-off-by (no one's to add): only
			# then is its absence let pass.
			ignore=FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID
			[ $preview = 0 ] || ignore=$ignore,MISSING_SIGN_OFF
			if out=$(cd "$kdir" && perl scripts/checkpatch.pl --strict --no-tree -q \
				--ignore "$ignore" "$p" 2>&1); then
				say "  checkpatch --strict: clean"
			else
				bad "checkpatch --strict: $(echo "$out" | head -3 | tr '\n' ' ')"
			fi
			trailers_check "$p" "$subj"
			fixes_check "$p" "$(awk -F'\t' -v s="$subj" \
				'$1 == "nofixes" && index(s, $2) == 1 { print $3 }' "$UP/fixes-evidence")"
		done
		if [ $n -gt 1 ]; then
			cover=$dir/0000-cover-letter.patch
			text=$UP/cover-$base-$set.txt
			[ -r "$text" ] || { bad "no cover letter text $text"; continue; }
			awk -v subj="$(head -1 "$text")" -v blurb="$text" '
				/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
				/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) if (n++) print l; next }
				{ print }' "$cover" >"$cover.new"
			mv "$cover.new" "$cover"
			to=$(printf '%s\n' "${all_to[@]}" | awk '!s[$0]++' | paste -sd, | sed 's/,/, /g')
			cc=$(printf '%s\n' "${all_cc[@]}" | awk '!s[$0]++' | paste -sd, | sed 's/,/, /g')
			add_headers "$cover" "$to" "$cc"
			say "$(grep -m1 '^Subject:' "$cover") (cover letter, to the union of its patches' recipients)"
		fi
	done <"$UP/sets-$base"
	rm -rf "$work"
done

# No placeholder identity anywhere in what would be mailed.
if [ $preview = 0 ] && grep -rlE "$PLACEHOLDER" "$OUT"/*/ >/dev/null 2>&1; then
	bad "a placeholder address is left in: $(grep -rlE "$PLACEHOLDER" "$OUT"/*/ | tr '\n' ' ')"
fi
say ""
if [ $fail = 0 ]; then
	say "upstream-series: every check passed$([ $preview = 1 ] && echo " (PREVIEW: not mail; set your identity and run again)")"
else
	say "upstream-series: checks failed (above)"
fi
exit $fail
