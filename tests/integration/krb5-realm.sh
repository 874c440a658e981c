#!/bin/sh
# krb5-realm.sh DIR PORT [KDC_ADDR [DOMAIN]]: a throwaway MIT Kerberos realm
# RNFSD.TEST for the RPCSEC_GSS integration test (test_gss_krb5.c) and the VM
# test bed's krb5 phase (tests/vm/krb5-phase.sh), all of it inside DIR:
#   DIR/krb5.conf, DIR/kdc.conf   client and KDC profiles (KRB5_CONFIG, KRB5_KDC_PROFILE);
#                                 krb5.conf names the KDC KDC_ADDR:PORT (default
#                                 127.0.0.1; krb5kdc listens on every address) and
#                                 maps DOMAIN's hosts (and localhost) to the realm
#   DIR/nfs.keytab                nfs/localhost's keys, for rnfsd's [rnfsd] keytab
#   DIR/ccache                    a ticket of the user principal "daemon" (password from kinit)
#   DIR/client.keytab             nfs/client.test's keys: a client's machine principal
#   DIR/kadmin.log, DIR/kdc.log   what kdb5_util, kadmin.local and krb5kdc said
#   DIR/kdc.pid                   the running krb5kdc on 127.0.0.1:PORT (kill it when done)
# Exit 77 when the MIT tools are missing (apt-get install krb5-kdc krb5-admin-server krb5-user).
set -eu
dir=$1 port=$2 kdc_addr=${3:-127.0.0.1} domain=${4:-}
realm=RNFSD.TEST
for t in kdb5_util kadmin.local krb5kdc kinit; do
	command -v $t >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
	command -v $t >/dev/null 2>&1 || { echo "krb5-realm.sh: no $t"; exit 77; }
done
cat >"$dir/krb5.conf" <<CONF
[libdefaults]
	default_realm = $realm
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	udp_preference_limit = 1
[realms]
	$realm = {
		kdc = $kdc_addr:$port
	}
[domain_realm]
	localhost = $realm
${domain:+	.$domain = $realm
	$domain = $realm}
CONF
cat >"$dir/kdc.conf" <<CONF
[kdcdefaults]
	kdc_ports = $port
	kdc_tcp_ports = $port
[realms]
	$realm = {
		database_name = $dir/principal
		key_stash_file = $dir/stash
		acl_file = $dir/kadm5.acl
		kdc_ports = $port
		kdc_tcp_ports = $port
	}
[logging]
	kdc = FILE:$dir/kdc.log
CONF
export KRB5_CONFIG="$dir/krb5.conf" KRB5_KDC_PROFILE="$dir/kdc.conf" KRB5CCNAME="FILE:$dir/ccache"
kdb5_util create -s -r $realm -P master-$$ >>"$dir/kadmin.log" 2>&1
kadmin.local -r $realm -q "addprinc -randkey nfs/localhost" >>"$dir/kadmin.log" 2>&1
kadmin.local -r $realm -q "ktadd -k $dir/nfs.keytab nfs/localhost" >>"$dir/kadmin.log" 2>&1
kadmin.local -r $realm -q "addprinc -pw user-pw-$$ daemon" >>"$dir/kadmin.log" 2>&1
kadmin.local -r $realm -q "addprinc -randkey nfs/client.test" >>"$dir/kadmin.log" 2>&1
kadmin.local -r $realm -q "ktadd -k $dir/client.keytab nfs/client.test" >>"$dir/kadmin.log" 2>&1
krb5kdc -r $realm -P "$dir/kdc.pid"
# the KDC forks; wait for its port, then get the user's ticket
i=0
until echo "user-pw-$$" | kinit daemon@$realm >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "krb5-realm.sh: kinit failed"; cat "$dir/kdc.log" 2>/dev/null; exit 1; }
	sleep 0.1
done
