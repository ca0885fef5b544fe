# Sandbox set-up: runs as root of fresh user, mount, PID, IPC and network namespaces (PID 1 there), then
# runs the interpreter without any capability. $1: size of the scratch file systems (bytes); $2: setpriv;
# $3: the file-system script (mounts.py); the rest: the interpreter command line (interpreter first).
# Exit 125 with a "comlrl-sandbox:" line when the set-up fails.
set -u
scratch=$1 setpriv=$2 mounts=$3
shift 3
# every mount read-only, a private size-limited /tmp (working directory /tmp/sandbox) and /dev/shm
"$1" -I -S -c "$mounts" "$scratch" || exit 125
cd /tmp/sandbox || { echo "comlrl-sandbox: cannot enter the working directory" >&2; exit 125; }
unset PWD OLDPWD  # the environment stays PATH, HOME and LANG
# No capability survives into the program (it cannot remount what was made read-only), nor can it gain one.
# The shell stays the program's parent (PID 1 here, which the program cannot kill) and waits for it.
"$setpriv" --no-new-privs --bounding-set=-all --inh-caps=-all -- "$@"
exit $?
