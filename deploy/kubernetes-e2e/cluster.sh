#!/usr/bin/env bash
# cluster.sh build|up|down|status: a single-node Kubernetes cluster for the
# end-to-end test of deploy/kubernetes (cmd/wirespeed's TestKubernetesE2E),
# built from source and run inside a network namespace this script
# creates, so that every node, pod and service address exists only there.
#
#   build     compiles Kubernetes, CoreDNS and kube-router (versions pinned
#             below) into $WIRESPEED_K8S_CACHE (default
#             /var/cache/wirespeed-k8s), outside any work tree, with Go
#             caches of its own there. Reused when complete: a second build
#             returns at once. About 35 minutes cold on 2 cores, 6.5 GB.
#   up        starts the cluster from the cache (about 30 s) and imports the
#             images (wirespeed built from this repository, pause, CoreDNS).
#   down      stops everything up started, by PID, and undoes every host
#             change; it says whether the host is as up found it.
#   status    the cache and the cluster.
#   complete  exit 0 when the cache is complete (what .ci/run asks).
#   images    builds and imports the images again (after a change of the
#             code, into a cluster that is up).
#   kubectl   the cache's kubectl, inside the namespace, as the cluster's admin.
#   exec      a command inside the cluster's network namespace.
#
# WIRESPEED_K8S_NAME (default e2e) names the cluster: its namespace is
# wirespeed-k8s-NAME, its state /var/tmp/wirespeed-k8s-NAME, so clusters of
# different names can run side by side.
#
# Needs root and Debian's containerd, runc, containernetworking-plugins,
# etcd-server, etcd-client, iptables, ipset and openssl.
set -euo pipefail

K8S_VERSION=v1.37.2
K8S_STAGING_VERSION=v0.37.2
COREDNS_VERSION=v1.15.0
# The CoreDNS plugins the cluster needs, in CoreDNS's directive order.
COREDNS_PLUGINS=(reload ready health errors log cache kubernetes loop whoami)
K8S_BINARIES=(kubectl kubelet kube-proxy kube-scheduler kube-controller-manager kube-apiserver)
# The Debian CNI plugins do not enforce NetworkPolicy; kube-router's
# firewall alone (iptables and ipset, no routing, no service proxy) does.
# The module proxy serves this one version of its v2 module.
KUBE_ROUTER_VERSION=v2.1.0
# Every binary a complete cache holds.
ALL_BINARIES=("${K8S_BINARIES[@]}" coredns kube-router pause)

CACHE=${WIRESPEED_K8S_CACHE:-/var/cache/wirespeed-k8s}
BIN=$CACHE/bin
STAMP=$BIN/COMPLETE

log() { printf '%s cluster.sh: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 1; }

# ---------------------------------------------------------------- build

# build_env points Go at caches of the cluster's own inside $CACHE, so the
# 4.5 GB of Kubernetes objects and 770 MB of modules neither crowd nor get
# trimmed out of the shared caches.
build_env() {
	export GOCACHE=$CACHE/gocache GOMODCACHE=$CACHE/gomod
	export CGO_ENABLED=0 GOFLAGS=-mod=mod GOWORK=off
}

# build_kubernetes makes a wrapper module: k8s.io/kubernetes replaces its
# staging modules (k8s.io/api, client-go, ...) with local paths, so it
# cannot be built with go install; the wrapper requires it and replaces
# every one of those with its published v0 version instead.
build_kubernetes() {
	local src=$CACHE/src/kubernetes
	mkdir -p "$src"
	cd "$src"
	if [ ! -f go.mod ]; then
		go mod init wirespeed.local/k8s-build
	fi
	go mod edit -require=k8s.io/kubernetes@$K8S_VERSION
	local gomod
	gomod=$(go mod download -json k8s.io/kubernetes@$K8S_VERSION |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	[ -f "$gomod" ] || die "no go.mod for k8s.io/kubernetes@$K8S_VERSION"
	local staging n=0
	for staging in $(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod"); do
		go mod edit -replace="$staging=$staging@$K8S_STAGING_VERSION"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "found no staging modules in $gomod"
	log "wrapper module replaces $n staging modules"
	cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
	go mod tidy -e >/dev/null 2>&1 || true
	go mod download
	local b t0
	for b in "${K8S_BINARIES[@]}"; do
		[ -x "$BIN/$b" ] && { log "$b already built"; continue; }
		t0=$(date +%s)
		log "building $b"
		go build -trimpath -o "$BIN/$b.tmp" \
			-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" \
			"k8s.io/kubernetes/cmd/$b"
		mv "$BIN/$b.tmp" "$BIN/$b"
		log "built $b in $(($(date +%s) - t0)) s"
	done
}

# build_coredns builds CoreDNS with only the plugins in COREDNS_PLUGINS.
build_coredns() {
	[ -x "$BIN/coredns" ] && { log "coredns already built"; return; }
	local src=$CACHE/src/coredns
	mkdir -p "$src"
	cd "$src"
	[ -f go.mod ] || go mod init wirespeed.local/coredns-build
	go mod edit -require=github.com/coredns/coredns@$COREDNS_VERSION
	{
		echo 'package main'
		echo
		echo 'import ('
		echo '	"github.com/coredns/coredns/core/dnsserver"'
		echo '	"github.com/coredns/coredns/coremain"'
		echo
		local p
		for p in "${COREDNS_PLUGINS[@]}"; do
			echo "	_ \"github.com/coredns/coredns/plugin/$p\""
		done
		echo ')'
		echo
		echo 'func init() {'
		printf '	dnsserver.Directives = []string{'
		for p in "${COREDNS_PLUGINS[@]}"; do printf '"%s", ' "$p"; done
		echo '}'
		echo '}'
		echo
		echo 'func main() { coremain.Run() }'
	} >main.go
	gofmt -w main.go
	go mod tidy
	local t0
	t0=$(date +%s)
	log "building coredns"
	go build -trimpath -ldflags "-s -w" -o "$BIN/coredns.tmp" .
	mv "$BIN/coredns.tmp" "$BIN/coredns"
	log "built coredns in $(($(date +%s) - t0)) s"
}

# build_kube_router builds kube-router for its NetworkPolicy firewall.
build_kube_router() {
	[ -x "$BIN/kube-router" ] && { log "kube-router already built"; return; }
	local src=$CACHE/src/kube-router
	mkdir -p "$src"
	cd "$src"
	[ -f go.mod ] || go mod init wirespeed.local/kube-router-build
	go mod edit -require=github.com/cloudnativelabs/kube-router/v2@$KUBE_ROUTER_VERSION
	cat >tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
GO
	go mod tidy -e >/dev/null 2>&1 || true
	local t0
	t0=$(date +%s)
	log "building kube-router"
	go build -trimpath -ldflags "-s -w" -o "$BIN/kube-router.tmp" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
	mv "$BIN/kube-router.tmp" "$BIN/kube-router"
	log "built kube-router in $(($(date +%s) - t0)) s"
}

# build_pause builds the sandbox's pause process: it holds the pod's
# namespaces, reaps orphans and waits for SIGTERM.
build_pause() {
	[ -x "$BIN/pause" ] && return
	local src=$CACHE/src/pause
	mkdir -p "$src"
	cd "$src"
	[ -f go.mod ] || go mod init wirespeed.local/pause
	cat >main.go <<'GO'
// pause holds a pod sandbox's namespaces until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
GO
	go build -trimpath -ldflags "-s -w" -o "$BIN/pause" .
}

# cache_complete says whether every binary is in the cache.
cache_complete() {
	[ -f "$STAMP" ] || return 1
	local b
	for b in "${ALL_BINARIES[@]}"; do
		[ -x "$BIN/$b" ] || return 1
	done
}

cmd_build() {
	if cache_complete; then
		log "cache $CACHE is complete ($(head -1 "$STAMP")); nothing to build"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH"
	mkdir -p "$BIN"
	build_env
	local t0
	t0=$(date +%s)
	(build_kubernetes)
	(build_coredns)
	(build_kube_router)
	(build_pause)
	"$BIN/kubectl" version --client >/dev/null
	{
		echo "kubernetes $K8S_VERSION"
		echo "coredns $COREDNS_VERSION"
		echo "coredns plugins ${COREDNS_PLUGINS[*]}"
		echo "kube-router $KUBE_ROUTER_VERSION"
		echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - t0)) s"
	} >"$STAMP.tmp"
	mv "$STAMP.tmp" "$STAMP"
	log "cache complete: $(du -sh "$BIN" | cut -f1) of binaries, $(du -sh "$CACHE" | cut -f1) in all"
}

# ---------------------------------------------------------------- up

# The cluster's name: its network namespace, its state directory and its
# cgroups carry it, so that two clusters on one machine do not collide.
NAME=${WIRESPEED_K8S_NAME:-e2e}
[[ $NAME =~ ^[a-z0-9][a-z0-9-]{0,20}$ ]] || die "WIRESPEED_K8S_NAME $NAME: use up to 21 of a-z, 0-9 and -"
NS=wirespeed-k8s-$NAME
STATE=${WIRESPEED_K8S_STATE:-/var/tmp/wirespeed-k8s-$NAME}
NODE=wirespeed-$NAME
CGROUP_ROOT=/wirespeed-k8s-$NAME
# Addresses that exist only inside the namespace $NS: the node's (on its
# loopback device, since the kernel has no dummy device), the pods' bridge
# and the services' virtual IPs.
NODE_IP=10.131.0.1
POD_CIDR=10.131.64.0/24
SERVICE_CIDR=10.131.128.0/24
API_SERVICE_IP=10.131.128.1
DNS_SERVICE_IP=10.131.128.10
# What the kubelet and containerd make whatever their configuration says;
# down removes each one that was not there before up.
HOST_DIRS=(/run/containerd /var/lib/cni /var/lib/kubelet /var/log/containers /var/log/pods)
# The host-wide sysctls the kubelet sets at its start; down puts back
# what up found.
KUBELET_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$E2E_DIR/../.." && pwd)
SOCK=$STATE/containerd/containerd.sock
KUBECONFIG_ADMIN=$STATE/pki/admin.kubeconfig

in_ns() { nsenter --net="/run/netns/$NS" -- "$@"; }
kc() { in_ns "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# start runs a component in the cluster's network namespace (and the
# host's mount namespace, which containerd and the kubelet must share),
# in a session of its own, and keeps its PID.
start() {
	local name=$1
	shift
	setsid nsenter --net="/run/netns/$NS" -- "$@" >"$STATE/log/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/pid/$name"
	echo "$name" >>"$STATE/pid/order"
}

# wait_for runs its command until it succeeds, for up to $1 seconds.
wait_for() {
	local limit=$1 what=$2 t=0
	shift 2
	until "$@" >/dev/null 2>&1; do
		t=$((t + 1))
		[ $t -le $((limit * 2)) ] || die "$what: not within ${limit}s (logs in $STATE/log)"
		sleep 0.5
	done
}

# ---- certificates, with openssl: one CA, a serving certificate for the
# API server and one for the kubelet, and client certificates.

pki_cert() { # name CN O [SAN]
	local name=$1 cn=$2 o=$3 san=${4:-}
	local d=$STATE/pki
	openssl genrsa -out "$d/$name.key" 2048 2>/dev/null
	openssl req -new -key "$d/$name.key" -subj "/CN=$cn${o:+/O=$o}" -out "$d/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [ -n "$san" ]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=$san"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"$d/$name.ext"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 7 -sha256 -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
}

kubeconfig() { # name cert
	"$BIN/kubectl" config --kubeconfig="$STATE/pki/$1.kubeconfig" set-cluster e2e \
		--server="https://$NODE_IP:6443" --certificate-authority="$STATE/pki/ca.crt" --embed-certs >/dev/null
	"$BIN/kubectl" config --kubeconfig="$STATE/pki/$1.kubeconfig" set-credentials "$1" \
		--client-certificate="$STATE/pki/$2.crt" --client-key="$STATE/pki/$2.key" --embed-certs >/dev/null
	"$BIN/kubectl" config --kubeconfig="$STATE/pki/$1.kubeconfig" set-context e2e --cluster=e2e --user="$1" >/dev/null
	"$BIN/kubectl" config --kubeconfig="$STATE/pki/$1.kubeconfig" use-context e2e >/dev/null
}

make_pki() {
	local d=$STATE/pki
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.crt" \
		-days 7 -subj "/CN=wirespeed-e2e-ca" 2>/dev/null
	pki_cert apiserver kube-apiserver "" \
		"DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$API_SERVICE_IP,IP:$NODE_IP,IP:127.0.0.1"
	pki_cert kubelet-serving "system:node:$NODE" system:nodes "DNS:$NODE,IP:$NODE_IP"
	pki_cert kubelet "system:node:$NODE" system:nodes
	pki_cert apiserver-kubelet kube-apiserver-kubelet-client system:masters
	pki_cert admin admin system:masters
	pki_cert controller-manager system:kube-controller-manager ""
	pki_cert scheduler system:kube-scheduler ""
	pki_cert kube-proxy system:kube-proxy ""
	# kube-router's firewall reads pods, namespaces, policies and nodes
	# cluster-wide; a test cluster gives it the masters group.
	pki_cert kube-router kube-router system:masters
	openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
	openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	kubeconfig admin admin
	kubeconfig kubelet kubelet
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig kube-proxy kube-proxy
	kubeconfig kube-router kube-router
}

# ---- images: docker-archive tarballs of one static binary each, imported
# into containerd's k8s.io namespace (nothing is pulled: no registry).

image_tar() { # out ref binary-source path-in-image entrypoint...
	local out=$1 ref=$2 src=$3 path=$4
	shift 4
	local w
	w=$(mktemp -d "$STATE/image.XXXXXX")
	mkdir -p "$w/root/$(dirname "$path")" "$w/root/tmp"
	install -m 0755 "$src" "$w/root/$path"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$w/root" -cf "$w/layer.tar" .
	local diff entry
	diff=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	entry=$(printf '"%s",' "$@")
	cat >"$w/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z",
 "config":{"Entrypoint":[${entry%,}],"User":"65532:65532","WorkingDir":"/",
  "Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},
 "rootfs":{"type":"layers","diff_ids":["sha256:$diff"]}}
JSON
	cat >"$w/manifest.json" <<JSON
[{"Config":"config.json","RepoTags":["$ref"],"Layers":["layer.tar"]}]
JSON
	tar -C "$w" -cf "$out" manifest.json config.json layer.tar
	rm -rf "$w"
}

make_images() {
	local d=$STATE/images
	mkdir -p "$d"
	log "building wirespeed from $REPO"
	local t0
	t0=$(date +%s)
	(cd "$REPO" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X wirespeed/internal/cli.Version=e2e" -o "$d/wirespeed" ./cmd/wirespeed)
	log "built wirespeed in $(($(date +%s) - t0)) s"
	image_tar "$d/wirespeed.tar" localhost/wirespeed:e2e "$d/wirespeed" usr/local/bin/wirespeed /usr/local/bin/wirespeed
	image_tar "$d/pause.tar" registry.k8s.io/pause:3.10.1 "$BIN/pause" pause /pause
	image_tar "$d/coredns.tar" localhost/coredns:e2e "$BIN/coredns" coredns /coredns
	local t
	for t in pause coredns wirespeed; do
		in_ns ctr --address "$SOCK" -n k8s.io images import --all-platforms "$d/$t.tar" >/dev/null
	done
	log "images imported: pause, coredns, wirespeed"
}

# ---- configuration files

write_configs() {
	mkdir -p "$STATE/containerd" "$STATE/cni/net.d" "$STATE/kubelet" "$STATE/config"
	cat >"$STATE/containerd/config.toml" <<TOML
version = 2
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  # This machine's root lacks CAP_SYS_RESOURCE: runc cannot lower
  # oom_score_adj below its own.
  restrict_oom_score_adj = true
  # Pod network namespaces under the state directory, not /run/netns.
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$STATE/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
TOML
	cat >"$STATE/cni/net.d/10-wirespeed.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "wirespeed-$NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
JSON
	echo "nameserver $NODE_IP" >"$STATE/config/resolv.conf"
	cat >"$STATE/config/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The host has cgroup v1, refused by default since 1.35.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
containerRuntimeEndpoint: unix://$SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $STATE/pki/kubelet-serving.crt
tlsPrivateKeyFile: $STATE/pki/kubelet-serving.key
clusterDomain: cluster.local
clusterDNS: [$DNS_SERVICE_IP]
resolvConf: $STATE/config/resolv.conf
podCIDR: $POD_CIDR
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet/volume-plugins
staticPodPath: ""
failSwapOn: false
hairpinMode: hairpin-veth
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%}
rotateCertificates: false
serverTLSBootstrap: false
YAML
	cat >"$STATE/config/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $STATE/pki/kube-proxy.kubeconfig}
hostnameOverride: $NODE
bindAddress: $NODE_IP
clusterCIDR: $POD_CIDR
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# Leave the conntrack table's size and timeouts alone: nf_conntrack_max
# is the host's, not the namespace's.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
}

# ---- the components

start_components() {
	start etcd etcd --name "$NODE" --data-dir "$STATE/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$NODE=http://127.0.0.1:2380" --listen-metrics-urls http://127.0.0.1:2381
	wait_for 30 "etcd healthy" in_ns etcdctl --endpoints http://127.0.0.1:2379 endpoint health
	start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--advertise-address "$NODE_IP" --bind-address 0.0.0.0 --secure-port 6443 \
		--service-cluster-ip-range "$SERVICE_CIDR" --cert-dir "$STATE/pki" \
		--client-ca-file "$STATE/pki/ca.crt" \
		--tls-cert-file "$STATE/pki/apiserver.crt" --tls-private-key-file "$STATE/pki/apiserver.key" \
		--kubelet-client-certificate "$STATE/pki/apiserver-kubelet.crt" --kubelet-client-key "$STATE/pki/apiserver-kubelet.key" \
		--kubelet-preferred-address-types InternalIP,Hostname \
		--service-account-key-file "$STATE/pki/sa.pub" --service-account-signing-key-file "$STATE/pki/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--authorization-mode Node,RBAC --profiling=false
	start containerd containerd --config "$STATE/containerd/config.toml"
	wait_for 60 "API server ready" kc get --raw /readyz
	log "etcd and the API server ready"
	start kube-controller-manager "$BIN/kube-controller-manager" \
		--kubeconfig "$STATE/pki/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/pki/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$STATE/pki/controller-manager.kubeconfig" \
		--service-account-private-key-file "$STATE/pki/sa.key" --root-ca-file "$STATE/pki/ca.crt" \
		--cluster-signing-cert-file "$STATE/pki/ca.crt" --cluster-signing-key-file "$STATE/pki/ca.key" \
		--use-service-account-credentials --leader-elect=false --bind-address 127.0.0.1 --profiling=false
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/pki/scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/pki/scheduler.kubeconfig" \
		--authorization-kubeconfig "$STATE/pki/scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --profiling=false
	wait_for 30 "containerd" in_ns ctr --address "$SOCK" version
	make_images
	start kubelet "$BIN/kubelet" --config "$STATE/config/kubelet.yaml" \
		--kubeconfig "$STATE/pki/kubelet.kubeconfig" --root-dir "$STATE/kubelet" \
		--cert-dir "$STATE/pki" --node-ip "$NODE_IP" --hostname-override "$NODE"
	start kube-proxy "$BIN/kube-proxy" --config "$STATE/config/kube-proxy.yaml"
}

# start_policy starts kube-router's NetworkPolicy firewall alone (no
# routing, no service proxy, no CNI); it needs its node registered.
start_policy() {
	start kube-router "$BIN/kube-router" --kubeconfig "$STATE/pki/kube-router.kubeconfig" \
		--hostname-override "$NODE" --run-firewall=true --run-router=false \
		--run-service-proxy=false --enable-cni=false --enable-ipv6=false \
		--metrics-port 0 --health-port 20244
	wait_for 60 "kube-router's firewall" in_ns curl -sf http://127.0.0.1:20244/healthz
}

# check_running says which component exited, with the end of its log.
check_running() {
	local name
	while read -r name; do
		our_pid "$(cat "$STATE/pid/$name")" && continue
		tail -20 "$STATE/log/$name.log" >&2
		die "$name exited (its log: $STATE/log/$name.log)"
	done <"$STATE/pid/order"
}

# make_cgroups makes the kubelet's cgroup root in every cgroup v1
# hierarchy (it refuses to start without it); a cpuset cgroup takes no
# task before it has CPUs and memory nodes, so it gets its parent's.
make_cgroups() {
	local h
	for h in /sys/fs/cgroup/*; do
		[ "${h##*/}" = unified ] && continue
		[ -d "$h" ] && [ ! -L "$h" ] || continue
		mkdir -p "$h$CGROUP_ROOT"
	done
	local cs=/sys/fs/cgroup/cpuset
	if [ -d "$cs$CGROUP_ROOT" ]; then
		cat "$cs/cpuset.cpus" >"$cs$CGROUP_ROOT/cpuset.cpus"
		cat "$cs/cpuset.mems" >"$cs$CGROUP_ROOT/cpuset.mems"
	fi
}

record_host() {
	local d
	: >"$STATE/host-dirs-made"
	for d in "${HOST_DIRS[@]}"; do
		[ -e "$d" ] || echo "$d" >>"$STATE/host-dirs-made"
	done
	local s
	: >"$STATE/host-sysctls"
	for s in "${KUBELET_SYSCTLS[@]}"; do
		echo "$s=$(sysctl -n "$s")" >>"$STATE/host-sysctls"
	done
	host_snapshot >"$STATE/host-before"
}

# host_snapshot is what down compares to say the host is as up found it:
# the host's network devices, addresses, routes and firewall, the sysctls
# the cluster touches, and of the network namespaces and mounts the ones
# that could be this cluster's (other engineers' labs come and go).
host_snapshot() {
	{
		ip -o link show | sed 's/^[0-9]*: //; s/ state .*//' | sort
		ip -o addr show | awk '{print $2, $3, $4}' | sort
		ip route show table all | sort
		iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' | sort
		ip6tables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' | sort
		ip netns list | grep -E "^($NS|cni-)" | sort
		awk '{print $5}' /proc/self/mountinfo | grep -E "^($STATE|/run/containerd|/var/lib/kubelet|/run/netns/($NS|cni-))" | sort
		sysctl net.ipv4.ip_forward net.ipv6.conf.all.forwarding net.bridge.bridge-nf-call-iptables "${KUBELET_SYSCTLS[@]}"
	} 2>/dev/null || true
}

cmd_up() {
	[ "$(id -u)" = 0 ] || die "up needs root"
	cache_complete || die "the cluster cache $CACHE is not complete: build it with '$0 build' (about 35 minutes on 2 cores; see docs/kubernetes.md)"
	local c
	for c in nsenter containerd runc ctr etcd etcdctl iptables ipset openssl /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback; do
		command -v "$c" >/dev/null || die "$c is missing: apt-get install containerd runc containernetworking-plugins etcd-server etcd-client iptables ipset openssl util-linux"
	done
	[ ! -e "/run/netns/$NS" ] || die "namespace $NS exists: a cluster $NAME is up (or was left behind): run '$0 down' first"
	[ ! -e "$STATE" ] || die "$STATE exists: run '$0 down' first"
	local t0
	t0=$(date +%s.%N)
	mkdir -p "$STATE/log" "$STATE/pid"
	: >"$STATE/pid/order"
	record_host
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add "$NODE_IP/32" dev lo
	# Forwarding and the bridge's netfilter hooks, in the namespace only
	# (both are per network namespace).
	in_ns sysctl -qw net.ipv4.ip_forward=1
	in_ns sysctl -qw net.bridge.bridge-nf-call-iptables=1
	make_cgroups
	make_pki
	write_configs
	start_components
	wait_for 90 "node $NODE registered" kc get node "$NODE"
	wait_for 90 "node $NODE Ready" kc wait --for=condition=Ready --timeout=5s "node/$NODE"
	log "node $NODE Ready"
	start_policy
	log "kube-router's NetworkPolicy firewall running"
	kc apply -f "$E2E_DIR/coredns.yaml" >/dev/null
	wait_for 120 "CoreDNS ready" kc -n kube-system wait --for=condition=Available --timeout=5s deployment/coredns
	check_running
	local t1
	t1=$(date +%s.%N)
	printf 'cluster %s up in %.1f s: node %s Ready, CoreDNS Available\n' "$NAME" "$(echo "$t1 - $t0" | bc)" "$NODE"
	echo "  kubectl: $0 kubectl get pods -A   (namespace $NS, state $STATE)"
}

# ---------------------------------------------------------------- down

# our_pid says whether PID is still the process start made: its command
# line names the state directory or a cache binary.
our_pid() {
	local pid=$1
	[ -r "/proc/$pid/cmdline" ] || return 1
	{ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -e "$STATE" -e "$BIN/"
}

stop_pid() { # name pid
	local pid=$2 i
	our_pid "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 40); do
		our_pid "$pid" || return 0
		sleep 0.25
	done
	log "$1 ($pid) did not stop on SIGTERM: SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	sleep 0.2
}

# kill_containers stops every container of this cluster's containerd:
# the shims and their processes outlive containerd otherwise.
kill_containers() {
	[ -S "$SOCK" ] || return 0
	local ctr=(ctr --address "$SOCK" -n k8s.io) id
	for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
		"${ctr[@]}" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
	done
	sleep 1
	for id in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
		"${ctr[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true
	done
	for id in $("${ctr[@]}" containers ls -q 2>/dev/null); do
		"${ctr[@]}" containers delete "$id" >/dev/null 2>&1 || true
	done
}

# shim_pids lists the containerd shims of this cluster: their command
# line carries this cluster's containerd address.
shim_pids() {
	local p
	for p in /proc/[0-9]*; do
		{ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "-address $SOCK" && echo "${p#/proc/}"
	done
	return 0
}

cmd_down() {
	[ "$(id -u)" = 0 ] || die "down needs root"
	if [ ! -d "$STATE" ] && [ ! -e "/run/netns/$NS" ]; then
		log "cluster $NAME is not up"
		return 0
	fi
	# The pods are not deleted one by one: their containers are killed
	# through containerd, their mounts undone below, and their network
	# namespaces' devices go with the cluster's namespace.
	local name
	for name in kube-router kube-proxy kubelet kube-scheduler kube-controller-manager; do
		[ -f "$STATE/pid/$name" ] && stop_pid "$name" "$(cat "$STATE/pid/$name")"
	done
	kill_containers
	[ -f "$STATE/pid/containerd" ] && stop_pid containerd "$(cat "$STATE/pid/containerd")"
	local p
	for p in $(shim_pids); do
		kill -KILL "$p" 2>/dev/null || true
	done
	for name in kube-apiserver etcd; do
		[ -f "$STATE/pid/$name" ] && stop_pid "$name" "$(cat "$STATE/pid/$name")"
	done
	# Every mount under the state directory (container root file systems,
	# secret volumes, pod network namespaces), deepest first.
	local m
	for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($STATE|/run/containerd|/var/lib/kubelet)(/|$)" | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	if [ -e "/run/netns/$NS" ]; then
		ip netns delete "$NS"
	fi
	# The kubelet's cgroups, innermost first.
	local c
	for c in /sys/fs/cgroup/*"$CGROUP_ROOT"; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [ -f "$STATE/host-sysctls" ]; then
		local kv
		while read -r kv; do
			sysctl -qw "$kv" || true
		done <"$STATE/host-sysctls"
	fi
	if [ -f "$STATE/host-dirs-made" ]; then
		local d
		while read -r d; do
			[ -n "$d" ] && rm -rf "$d"
		done <"$STATE/host-dirs-made"
	fi
	local before=""
	[ -f "$STATE/host-before" ] && before=$(cat "$STATE/host-before")
	rm -rf "$STATE"
	if [ -n "$before" ]; then
		local diff
		diff=$(diff <(echo "$before") <(host_snapshot) || true)
		if [ -n "$diff" ]; then
			log "the host differs from before up (another engineer's or process's change, or a leftover of this cluster):"
			echo "$diff" >&2
		else
			log "host as before up: devices, addresses, routes, firewall, namespaces, mounts, sysctls"
		fi
	fi
	log "cluster $NAME down"
}

cmd_status() {
	if cache_complete; then
		echo "cache $CACHE: complete"
		sed 's/^/  /' "$STAMP"
	else
		echo "cache $CACHE: not complete (build it with '$0 build')"
	fi
	if [ -e "/run/netns/$NS" ]; then
		echo "cluster $NAME: up (namespace $NS, state $STATE)"
		kc get nodes -o wide 2>&1 | sed 's/^/  /'
	else
		echo "cluster $NAME: down"
	fi
}

# ---------------------------------------------------------------- main

main() {
	case "${1:-}" in
	build) cmd_build ;;
	up) cmd_up ;;
	down) cmd_down ;;
	status) cmd_status ;;
	complete) cache_complete ;;
	images)
		[ -e "/run/netns/$NS" ] || die "cluster $NAME is not up"
		make_images
		;;
	kubectl)
		shift
		kc "$@"
		;;
	exec)
		shift
		in_ns "$@"
		;;
	*)
		echo "usage: $0 build|up|down|status|complete|images|kubectl ARGS...|exec COMMAND..." >&2
		echo "  WIRESPEED_K8S_CACHE (default /var/cache/wirespeed-k8s), WIRESPEED_K8S_NAME (default e2e)" >&2
		exit 2
		;;
	esac
}

# Sourced (for a look at one function), it only defines them.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
