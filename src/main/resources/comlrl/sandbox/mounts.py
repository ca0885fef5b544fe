# Sandbox file systems, run as root of the run's fresh user and mount namespaces before the program:
# every mount read-only (one recursive mount_setattr; per mount on kernels before 5.12), then a private,
# size-limited /tmp (holding the working directory /tmp/sandbox) and /dev/shm. argv[1]: their size in bytes.
# On failure: a "comlrl-sandbox:" line on stderr and exit status 125.
import ctypes, os, sys

libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 4096, 1 << 21, 1 << 24
SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1
KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
              "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}


def fail(what):
    sys.stderr.write("comlrl-sandbox: %s: %s\n" % (what, os.strerror(ctypes.get_errno())))
    sys.exit(125)


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def read_only_everywhere():
    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    if libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)) == 0:
        return
    if ctypes.get_errno() != 38:  # ENOSYS: a kernel before 5.12, remount one by one below
        fail("cannot make the file system read-only")
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split()[4:6] for line in f]
    for point, options in mounts:
        point = point.encode().decode("unicode_escape").encode("latin-1")  # mountinfo writes a space as \040
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY  # what the parent namespace locked must be kept
        flags |= sum(KEPT_FLAGS.get(option, 0) for option in options.split(","))
        if libc.mount(None, point, None, flags, None) != 0:
            fail("cannot make %s read-only" % point.decode(errors="replace"))


read_only_everywhere()
for target in (b"/tmp", b"/dev/shm"):
    if os.path.isdir(target):
        options = ("size=%d,mode=1777" % int(sys.argv[1])).encode()
        if libc.mount(b"comlrl-sandbox", target, b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
            fail("cannot mount a private " + target.decode())
os.mkdir("/tmp/sandbox")
