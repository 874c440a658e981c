#!/bin/sh
# layer-includes.sh SRCDIR: the layers' #include lines point downwards only
# (issue 21). Rules:
#   core/        includes none of rpc/ transport/ nfs/ nlm/ backend/ conf/ daemon/
#   nfs/common/  (beneath the NFS versions and NLM) includes neither nfs/v3/ nor nfs/v4/
#   nfs/v3/, nfs/v4/  do not include each other
#   nlm/         includes neither nfs/v3/ nor nfs/v4/ (nfs/common/ is allowed:
#                NLM's handles are NFSv3's envelopes, its exports the same table)
#   and no "../" include in those folders (a way round the rules).
# Comments naming other layers are not includes and pass. Each forbidden
# include is listed as file:line; any fails the test.
cd "${1:?usage: layer-includes.sh SRCDIR}" || exit 1
for d in core nfs/common nfs/v3 nfs/v4 nlm; do
	[ -d "$d" ] || { echo "$d: missing (wrong SRCDIR?)"; exit 1; }
done
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]'
rc=0
# rule WHY FOLDERS ALTERNATIVES: no include line in FOLDERS whose path starts
# with one of ALTERNATIVES (an ERE alternation) followed by "/"
rule() {
	# shellcheck disable=SC2086 # FOLDERS is a list
	hits=$(grep -rnE --include='*.c' --include='*.h' "$inc($3)/" $2)
	if [ -n "$hits" ]; then
		echo "$1:"
		echo "$hits"
		rc=1
	fi
}
rule "core/ includes a layer above it" core 'rpc|transport|nfs|nlm|backend|conf|daemon'
rule "nfs/common/ includes an NFS version" nfs/common 'nfs/v3|nfs/v4'
rule "NFSv3 includes NFSv4" nfs/v3 'nfs/v4'
rule "NFSv4 includes NFSv3" nfs/v4 'nfs/v3'
rule "nlm/ includes an NFS version" nlm 'nfs/v3|nfs/v4'
rule "an include climbs out of its folder" "core nfs nlm" '\.\.'
[ $rc -eq 0 ] && echo "no cross-layer include"
exit $rc
