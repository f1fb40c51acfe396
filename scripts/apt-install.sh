# Sourced by the scripts that install what they need from Debian's packages
# (notebooks/run.sh and scripts/report-check/run.sh when it is missing;
# scripts/ompi-allreduce/run.sh and scripts/gloo-allreduce/run.sh with
# --install): one way to do it, as root or through sudo, quietly, without
# recommends. POSIX sh, so that sh and bash scripts both source it.
#
#   apt_install CALLER PACKAGE...
#
# CALLER names the script in its messages. Installs the packages (apt-get
# update, then install); exits the script with status 2 when there is
# neither root nor sudo, or apt-get fails.
apt_install() {
	_apt_caller=$1
	shift
	echo "== installing $* (apt-get)"
	_apt_sudo=
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null; then
			echo "$_apt_caller: $* missing, and neither root nor sudo to install them" >&2
			exit 2
		fi
		_apt_sudo=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$_apt_sudo apt-get update -qq
	$_apt_sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null || {
		echo "$_apt_caller: apt-get could not install $*" >&2
		exit 2
	}
}
