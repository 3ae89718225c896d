/// The umockdev bridge of `felica-sim rcs380` and `rcs956`, in Python (umockdev's usbdevfs
/// plumbing is reached through its GObject bindings): ``USBBridge`` hands it to Debian's
/// `python3 -c` under `umockdev-wrapper`. Kept in the binary as text, so felica-sim needs no
/// file beside it; the lines on the socket are described in the script's docstring.
let usbBridgeScript = #"""
#!/usr/bin/python3
"""USB plumbing for felica-sim's emulated USB readers (Sony RC-S380, RC-S360).

Builds a umockdev testbed holding one fake USB device, runs COMMAND with the testbed
visible to it, and carries the device's bulk transfers between the client's libusb
(usbdevfs ioctls, intercepted by umockdev; libusb-1.0 and the older libusb-0.1 that
libnfc uses) and the reader's behaviour, which lives in felica-sim (Swift) at the other
end of the socket passed as --fd. felica-sim also decides what the device is: its
descriptors (--descriptors, device then configuration descriptor, hex) and strings.

Only transfers are handled here; what the reader answers, and when, is decided by
felica-sim. Lines on the socket:
    bridge -> sim   W <hex>        a bulk OUT transfer ended (one whole USB transfer)
    sim -> bridge   R <hex>        put this on the bulk IN endpoint now
    sim -> bridge   U              the reader leaves the bus now (no longer listed)
    sim -> bridge   P              the reader is plugged back in now, at the next address
                                   (a device opened before it left stays dead, as a
                                   real one would)

Must run under umockdev-wrapper with Debian's /usr/bin/python3 (for gi).
"""
import argparse
import errno
import os
import socket
import struct
import subprocess
import sys
import threading

import gi

gi.require_version("UMockdev", "1.0")
gi.require_version("GLib", "2.0")
from gi.repository import GLib, UMockdev  # noqa: E402


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr


# usbdevfs requests (linux/usbdevice_fs.h, x86_64 sizes).
CONTROL = _ioc(3, 0, 24)
SETINTERFACE = _ioc(2, 4, 8)
SETCONFIGURATION = _ioc(2, 5, 4)
GETDRIVER = _ioc(1, 8, 260)
SUBMITURB = _ioc(2, 10, 56)
DISCARDURB = _ioc(0, 11, 0)
REAPURB = _ioc(1, 12, 8)
REAPURBNDELAY = _ioc(1, 13, 8)
CLAIMINTERFACE = _ioc(2, 15, 4)
RELEASEINTERFACE = _ioc(2, 16, 4)
CONNECTINFO = _ioc(1, 17, 8)
IOCTL = _ioc(3, 18, 16)
RESET = _ioc(0, 20, 0)
CLEAR_HALT = _ioc(2, 21, 4)
GET_CAPABILITIES = _ioc(2, 26, 4)
DISCONNECT_CLAIM = _ioc(2, 27, 264)
GET_SPEED = _ioc(0, 31, 0)

URB_TYPE_CONTROL = 2
URB_TYPE_BULK = 3
URB_ZERO_PACKET = 0x40
CAP_ZERO_PACKET = 0x01
CAP_BULK_CONTINUATION = 0x02
CAP_NO_PACKET_SIZE_LIM = 0x04
CAP_REAP_AFTER_DISCONNECT = 0x10
URB_FORMAT = "<BBxxiI4xQiiiiiIQ"
URB_SIZE = struct.calcsize(URB_FORMAT)
CTRL_FORMAT = "<BBHHHI4xQ"  # struct usbdevfs_ctrltransfer (USBDEVFS_CONTROL, libusb-0.1)
USBDEVFS_DISCONNECT = 0x5516  # ioctl codes inside USBDEVFS_IOCTL
USBDEVFS_CONNECT = 0x5517
EMPTY_REAP_HOLD_MS = 2
DEBUG = bool(os.environ.get("FELICA_USB_BRIDGE_DEBUG"))


class Device:
    """What the descriptors say: ids, release, and the bulk endpoints with their packet size."""

    def __init__(self, raw):
        _len, _type, _usb, _cls, _sub, _proto, _mps0, self.vendor, self.product, self.release, _m, _p, _s, _n = \
            struct.unpack("<BBHBBBBHHHBBBB", raw[:18])
        self.out_ep = self.in_ep = None
        self.packet_size = 64
        i = 18
        while i + 2 <= len(raw) and raw[i] >= 2:
            if raw[i + 1] == 5 and raw[i + 3] & 3 == 2:  # a bulk endpoint
                address, size = raw[i + 2], struct.unpack("<H", raw[i + 4:i + 6])[0]
                if address & 0x80:
                    self.in_ep = address
                else:
                    self.out_ep = address
                self.packet_size = size
            i += raw[i]
        if self.out_ep is None or self.in_ep is None:
            raise ValueError("the descriptors name no bulk OUT and IN endpoints")


def string_descriptor(text):
    raw = text.encode("utf-16-le")
    return bytes([2 + len(raw), 3]) + raw


class Reader(UMockdev.IoctlBase):
    """Answers the client's usbdevfs ioctls for one emulated reader."""

    def __init__(self, sim, device, strings, kernel_driver):
        super().__init__()
        self.device = device
        # umockdev calls the ioctl handler on a thread of its own, while the sim's lines and
        # the reap timers arrive on the main loop: one lock keeps the two apart.
        self.lock = threading.RLock()
        self.sim = sim
        self.strings = strings
        self.kernel_driver = kernel_driver
        self.unplugged = False
        self.devnode = None      # the node of the device on the bus now
        self.in_waiting = []     # IN URBs submitted, not yet filled
        self.in_data = []        # IN transfers from the sim not yet taken by a URB
        self.done = []           # (urb IoctlData, status, payload or None) ready to reap
        self.held = []           # reap clients waiting for something to finish
        self.out_pending = b""   # OUT bytes of a transfer not ended yet (no short packet)
        self.draining = set()    # clients whose last reap took a URB (ids)

    # -- ioctls -------------------------------------------------------------------
    def do_handle_ioctl(self, client):
        try:
            with self.lock:
                self.handle(client)
        except Exception as e:  # an unanswered ioctl would hang the client forever
            print("usb-bridge: %r" % (e,), file=sys.stderr)
            client.complete(-1, errno.EIO)
        return True

    def handle(self, client):
        request = client.get_request() & 0xFFFFFFFF
        arg = client.get_arg()
        if DEBUG:
            print("usb-bridge: ioctl %08x done=%d held=%d waiting=%d data=%d" % (request, len(self.done), len(self.held), len(self.in_waiting), len(self.in_data)), file=sys.stderr)
        # A client of an earlier address had the reader open before it left: it stays dead.
        gone = self.unplugged or client.get_devnode() != self.devnode
        if gone and request not in (REAPURB, REAPURBNDELAY, DISCARDURB, RELEASEINTERFACE):
            client.complete(-1, errno.ENODEV)
        elif request == GET_CAPABILITIES:
            caps = CAP_ZERO_PACKET | CAP_BULK_CONTINUATION | CAP_NO_PACKET_SIZE_LIM | CAP_REAP_AFTER_DISCONNECT
            d = arg.resolve(0, 4)
            d.update(0, struct.pack("<I", caps))
            client.complete(0, 0)
        elif request == GETDRIVER:
            if self.kernel_driver:
                d = arg.resolve(0, 260)
                d.update(4, self.kernel_driver.encode() + b"\0")
                client.complete(0, 0)
            else:
                client.complete(-1, errno.ENODATA)
        elif request == CLAIMINTERFACE:
            client.complete(*((-1, errno.EBUSY) if self.kernel_driver else (0, 0)))
        elif request == DISCONNECT_CLAIM:
            self.detach(client)
        elif request == CONNECTINFO:
            d = arg.resolve(0, 8)
            d.update(0, struct.pack("<IB3x", self.address, 0))
            client.complete(0, 0)
        elif request == CONTROL:
            # libusb-0.1's synchronous control transfer (libusb-1.0 sends control URBs).
            ctrl = arg.resolve(0, struct.calcsize(CTRL_FORMAT))
            request_type, req, value, index, length, _timeout, _data = struct.unpack(CTRL_FORMAT, bytes(ctrl.retrieve()))
            reply = self.control(struct.pack("<BBHHH", request_type, req, value, index, length))
            if reply and length:
                ctrl.resolve(16, length).update(0, reply)
            client.complete(len(reply), 0)
        elif request == IOCTL and struct.unpack("<iI", bytes(arg.resolve(0, 8).retrieve()))[1] not in (USBDEVFS_DISCONNECT, USBDEVFS_CONNECT):
            client.complete(-1, errno.ENOSYS)  # a hub's port information, say: not a hub
        elif request == IOCTL:
            self.detach(client)  # USBDEVFS_DISCONNECT / CONNECT through the generic ioctl
        elif request in (RELEASEINTERFACE, SETINTERFACE, SETCONFIGURATION, CLEAR_HALT, RESET):
            client.complete(0, 0)
        elif request == GET_SPEED:
            client.complete(2, 0)  # USB_SPEED_FULL
        elif request == SUBMITURB:
            self.submit(client, arg)
        elif request in (REAPURB, REAPURBNDELAY):
            self.reap(client, arg, request == REAPURBNDELAY)
        elif request == DISCARDURB:
            self.discard(client, arg)
        else:
            client.complete(-1, errno.ENOTTY)

    def detach(self, client):
        """Detaches the kernel driver, which may be done only when the bridge was told so."""
        if self.kernel_driver and not self.allow_detach:
            client.complete(-1, errno.EBUSY)
        else:
            self.kernel_driver = None
            client.complete(0, 0)

    def submit(self, client, arg):
        urb = arg.resolve(0, URB_SIZE)
        kind, endpoint, _status, flags, _buf, length, *_ = struct.unpack(URB_FORMAT, bytes(urb.retrieve()))
        # The buffer is resolved once, here; a reap writes into this same object.
        buffer = urb.resolve(16, length) if length else None
        if kind == URB_TYPE_CONTROL and buffer is not None:
            self.finish(client, urb, buffer, 0, self.control(bytes(buffer.retrieve()[:8])), offset=8)
        elif kind == URB_TYPE_BULK and endpoint == self.device.out_ep:
            data = bytes(buffer.retrieve()) if buffer is not None else b""
            self.finish(client, urb, None, 0, None, actual=length)
            self.out_pending += data
            # A transfer ends with a short packet: one that is not full, or a zero-length one.
            if length % self.device.packet_size != 0 or flags & URB_ZERO_PACKET or length == 0:
                frame, self.out_pending = self.out_pending, b""
                if frame:
                    if DEBUG:
                        print("usb-bridge: to sim %s" % frame.hex(), file=sys.stderr)
                    self.send_to_sim("W " + frame.hex())
        elif kind == URB_TYPE_BULK and endpoint == self.device.in_ep:
            self.in_waiting.append((client, urb, buffer, length))
            self.fill()
        else:
            client.complete(-1, errno.EINVAL)
            return
        client.complete(0, 0)

    def control(self, setup):
        request_type, request, value, index, length = struct.unpack("<BBHHH", setup)
        if request_type == 0x80 and request == 6 and value >> 8 == 3:
            i = value & 0xFF
            if i == 0:
                return bytes([4, 3, 0x09, 0x04])[:length]
            if i in self.strings:
                return string_descriptor(self.strings[i])[:length]
        return b""

    def finish(self, owner, urb, buffer, status, payload, actual=None, offset=0):
        self.done.append((owner, urb, buffer, status, payload, actual, offset))
        self.wake()

    def fill(self):
        while self.in_waiting and self.in_data:
            owner, urb, buffer, length = self.in_waiting.pop(0)
            if not owner.get_connected():
                continue  # left behind by a process that has ended
            data = self.in_data.pop(0)
            if len(data) > length:
                self.in_data.insert(0, data[length:])
                data = data[:length]
            self.finish(owner, urb, buffer, 0, data)

    def reap(self, client, arg, nonblocking):
        mine = [i for i, d in enumerate(self.done) if d[0] is client]
        if mine:
            _owner, urb, buffer, status, payload, actual, offset = self.done.pop(mine[0])
            if payload is not None:
                if payload and buffer is not None:
                    buffer.update(offset, payload)
                actual = len(payload)
            urb.update(4, struct.pack("<i", status))
            urb.update(28, struct.pack("<i", actual or 0))
            arg.resolve(0, 8).set_ptr(0, urb)
            self.draining.add(id(client))
            client.complete(0, 0)
        elif self.unplugged or client.get_devnode() != self.devnode:
            client.complete(-1, errno.ENODEV)
        elif nonblocking and id(client) in self.draining:
            # libusb reaps until nothing is left after each URB it takes: that last, empty
            # reap is answered at once. Holding it would add the hold to every transfer,
            # and most to the host that sends the most commands.
            self.draining.discard(id(client))
            client.complete(-1, errno.EAGAIN)
        else:
            # Nothing finished: the node reads as always ready, so libusb would spin;
            # hold the reap until a transfer finishes or a short while passes.
            entry = {"client": client, "arg": arg, "nonblocking": nonblocking}
            GLib.timeout_add(EMPTY_REAP_HOLD_MS, self.expire, entry)
            self.held.append(entry)

    def expire(self, entry):
        # An entry answered early is no longer held; its timer just runs out.
        with self.lock:
            if any(e is entry for e in self.held):
                self.held = [e for e in self.held if e is not entry]
                self.answer(entry)
        return False

    def answer(self, entry):
        """Answers a held reap; a client that has gone away cannot take it."""
        try:
            if entry["nonblocking"] and not self.unplugged and not any(d[0] is entry["client"] for d in self.done):
                entry["client"].complete(-1, errno.EAGAIN)
            else:
                self.reap(entry["client"], entry["arg"], entry["nonblocking"])
        except Exception as e:
            if DEBUG:
                print("usb-bridge: held reap: %r" % (e,), file=sys.stderr)

    def wake(self):
        self.held = [e for e in self.held if e["client"].get_connected()]
        for entry in list(self.held):
            if self.unplugged or any(d[0] is entry["client"] for d in self.done):
                self.held = [e for e in self.held if e is not entry]
                self.answer(entry)

    def discard(self, client, arg):
        raw = bytes(arg.retrieve())
        address = struct.unpack("<Q", raw[:8])[0] if len(raw) >= 8 else None
        for i, (owner, urb, buffer, _length) in enumerate(self.in_waiting):
            if owner is client and urb.client_addr == address:
                del self.in_waiting[i]
                self.finish(owner, urb, buffer, -errno.ENOENT, b"")
                client.complete(0, 0)
                return
        client.complete(-1, errno.EINVAL)

    # -- the sim's side -----------------------------------------------------------------
    def send_to_sim(self, line):
        try:
            self.sim.sendall((line + "\n").encode())
        except OSError:
            pass

    def from_sim(self, line):
        with self.lock:
            self.take(line)

    def take(self, line):
        if DEBUG:
            print("usb-bridge: from sim %s" % line, file=sys.stderr)
        if line.startswith("R "):
            self.in_data.append(bytes.fromhex(line[2:]))
            self.fill()
        elif line == "U":
            self.unplugged = True
            for owner, urb, buffer, _length in self.in_waiting:
                self.finish(owner, urb, buffer, -errno.ENODEV, b"")
            self.in_waiting = []
            self.in_data = []
            self.wake()
            self.on_unplug()
        elif line == "P":
            # Plugged back in: a fresh device for whoever opens it now.
            self.unplugged = False
            self.done = []
            self.out_pending = b""
            self.on_replug()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fd", type=int, required=True, help="socket to felica-sim")
    p.add_argument("--bus", type=int, default=1)
    p.add_argument("--address", type=int, default=4)
    p.add_argument("--descriptors", required=True, help="device and configuration descriptors, hex")
    p.add_argument("--manufacturer", help="string descriptor 1")
    p.add_argument("--product-name", help="string descriptor 2")
    p.add_argument("--kernel-driver", help="pretend this kernel driver holds the interface")
    p.add_argument("--allow-detach", action="store_true", help="let the client detach that driver")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command to run")
    raw = bytes.fromhex(args.descriptors)
    try:
        device = Device(raw)
    except (ValueError, struct.error) as e:
        p.error("--descriptors: %s" % (e,))

    sim = socket.socket(fileno=args.fd)
    strings = {i: text for i, text in ((1, args.manufacturer), (2, args.product_name)) if text}
    reader = Reader(sim, device, strings, args.kernel_driver)
    reader.allow_detach = args.allow_detach
    reader.address = args.address

    testbed = UMockdev.Testbed.new()

    def record(address):
        """The fake device at `address`: sysfs for libusb-1.0 (through libudev), and the
        node's own contents, the descriptors, for libusb-0.1, which reads them from the node
        as it would from usbfs."""
        devnode = "/dev/bus/usb/%03d/%03d" % (args.bus, address)
        return devnode, "".join([
            "P: /devices/pci0000:00/0000:00:14.0/usb%d/%d-%d\n" % (args.bus, args.bus, address),
            "N: bus/usb/%03d/%03d=%s\n" % (args.bus, address, raw.hex().upper()),
            "E: SUBSYSTEM=usb\nE: DEVTYPE=usb_device\n",
            "E: DEVNAME=%s\n" % devnode,
            "E: BUSNUM=%03d\nE: DEVNUM=%03d\n" % (args.bus, address),
            "E: PRODUCT=%x/%x/%x\n" % (device.vendor, device.product, device.release),
            "A: idVendor=%04x\\n\nA: idProduct=%04x\\n\n" % (device.vendor, device.product),
            "A: busnum=%d\\n\nA: devnum=%d\\n\n" % (args.bus, address),
            "A: speed=12\\n\nA: bConfigurationValue=1\\n\n",
            "".join("A: %s=%s\\n\n" % (name, strings[i]) for i, name in ((1, "manufacturer"), (2, "product")) if i in strings),
            "H: descriptors=%s\n" % raw.hex(),
        ])

    plugged = {}

    def plug_in(address):
        devnode, text = record(address)
        reader.address = address
        reader.devnode = devnode
        # The handler first, so the node answers from the moment it appears.
        testbed.attach_ioctl(devnode, reader)
        testbed.add_from_string(text)
        plugged["syspath"] = "/sys/devices/pci0000:00/0000:00:14.0/usb%d/%d-%d" % (args.bus, args.bus, address)

    def unplug():
        # Gone from the bus: not listed, no node (libusb and libnfc find nothing).
        if plugged.get("syspath"):
            testbed.remove_device(plugged.pop("syspath"))
        # umockdev leaves the node behind; the kernel would not.
        node = testbed.get_root_dir() + reader.devnode
        if os.path.lexists(node):
            os.unlink(node)

    def replug():
        # A reader plugged in again gets the next address on its bus, as the kernel gives it.
        plug_in(reader.address + 1)

    reader.on_unplug = unplug
    reader.on_replug = replug
    plug_in(args.address)

    env = dict(os.environ)
    env["UMOCKDEV_DIR"] = testbed.get_root_dir()
    loop = GLib.MainLoop()
    try:
        child = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        print(f"felica-sim: {command[0]}: command not found", file=sys.stderr)
        sys.exit(127)
    except PermissionError:
        print(f"felica-sim: {command[0]}: permission denied", file=sys.stderr)
        sys.exit(126)

    buffered = [b""]

    def on_sim(_fd, condition):
        data = b""
        if condition & GLib.IO_IN:
            try:
                data = sim.recv(65536)
            except OSError:
                data = b""
        if not data:
            return False
        buffered[0] += data
        *lines, buffered[0] = buffered[0].split(b"\n")
        for line in lines:
            reader.from_sim(line.decode())
        return True

    GLib.io_add_watch(sim.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, on_sim)

    def check_child():
        if child.poll() is None:
            return True
        loop.quit()
        return False

    GLib.timeout_add(10, check_child)
    loop.run()
    sim.close()
    sys.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)


if __name__ == "__main__":
    main()
"""#
