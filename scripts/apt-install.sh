# Sourced by the scripts that install what they need from Debian's packages
# when it is missing (notebooks/run.sh, scripts/report-check/run.sh): one
# way to do it, as root or through sudo, quietly, without recommends.
#
#   apt_install CALLER PACKAGE...
#
# CALLER names the script in its messages. Installs the packages (apt-get
# update, then install); exits the script with status 2 when there is
# neither root nor sudo, or apt-get fails.
apt_install() {
	local caller=$1
	shift
	echo "== installing $* (apt-get)"
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null; then
			echo "$caller: $* missing, and neither root nor sudo to install them" >&2
			exit 2
		fi
		sudo=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null || {
		echo "$caller: apt-get could not install $*" >&2
		exit 2
	}
}
