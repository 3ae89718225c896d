#!/usr/bin/env bash
# Writes the fake system trees `felica doctor --root` is tested on (run it in this
# directory). Device nodes are empty files: the tests set their modes, which git does not keep.
set -e
usb() { # tree name vendor product bus dev productname
  d="$1/sys/bus/usb/devices/$2"; mkdir -p "$d"
  echo "$3" > "$d/idVendor"; echo "$4" > "$d/idProduct"; echo "$5" > "$d/busnum"; echo "$6" > "$d/devnum"
  [ -n "$7" ] && echo "$7" > "$d/product"
  mkdir -p "$1/sys/bus/usb/devices/$2:1.0"; echo ff > "$1/sys/bus/usb/devices/$2:1.0/bInterfaceClass"
  b=$(printf %03d $5); n=$(printf %03d $6); mkdir -p "$1/dev/bus/usb/$b"; : > "$1/dev/bus/usb/$b/$n"
}
common() {
  t=$1; mkdir -p $t/proc/self $t/proc/1 $t/etc
  printf 'Name:\tfelica\nUid:\t4242\t4242\t4242\t4242\nGid:\t4242\t4242\t4242\t4242\nGroups:\t24 27\n' > $t/proc/self/status
  echo systemd > $t/proc/1/comm
  printf 'root:x:0:0:root:/root:/bin/bash\nalice:x:4242:4242:Alice:/home/alice:/bin/bash\n' > $t/etc/passwd
  printf 'root:x:0:\ncdrom:x:24:alice\nsudo:x:27:alice\nplugdev:x:46:\nalice:x:4242:\n' > $t/etc/group
  mkdir -p $t/sys/bus/usb/devices/usb1; echo 1d6b > $t/sys/bus/usb/devices/usb1/idVendor; echo 0002 > $t/sys/bus/usb/devices/usb1/idProduct
  echo 1 > $t/sys/bus/usb/devices/usb1/busnum; echo 1 > $t/sys/bus/usb/devices/usb1/devnum; echo "xHCI Host Controller" > $t/sys/bus/usb/devices/usb1/product
  mkdir -p $t/sys/bus/usb/devices/1-0:1.0; echo 09 > $t/sys/bus/usb/devices/1-0:1.0/bInterfaceClass
}
dpkg() { # tree packages...
  mkdir -p $1/var/lib/dpkg; f=$1/var/lib/dpkg/status; : > $f; shift
  printf 'Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\n\n' >> $f
  for p in "$@"; do n=${p%%=*}; v=${p#*=}; printf 'Package: %s\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\n\n' $n $v >> $f; done
  printf 'Package: libnfc5\nStatus: deinstall ok config-files\nVersion: 1.7.1-4\n\n' >> $f
}
modules() { t=$1; shift; mkdir -p $t/proc; : > $t/proc/modules; for l in "$@"; do echo "$l" >> $t/proc/modules; done; }

# ready: an SCL3711 with nothing in its way
rm -rf ready; common ready
usb ready 1-2 04e6 5591 1 4 "SCL3711-NFC&RW"
usb ready 1-3 046d c31c 1 2 "USB Keyboard"
dpkg ready libnfc6=1.8.0-2 libpcsclite1=1.9.9-2 pcscd=1.9.9-2 libccid=1.5.2-1
modules ready "ext4 1036288 1 - Live 0x0000000000000000" "usbhid 69632 0 - Live 0x0000000000000000"
mkdir -p ready/run/pcscd; : > ready/run/pcscd/pcscd.comm

# blocked: SCL3711 and ACR122U held by pn533_usb; pcscd running and holding the ACR122U; libraries found by file only
rm -rf blocked; common blocked
usb blocked 1-2 04e6 5591 1 4 "SCL3711-NFC&RW"
usb blocked 1-4 072f 2200 1 5 "ACR122U PICC Interface"
ln -s ../../../../../bus/usb/drivers/pn533_usb blocked/sys/bus/usb/devices/1-2:1.0/driver
modules blocked "pn533_usb 20480 0 - Live 0x0000000000000000" "pn533 45056 1 pn533_usb, Live 0x0000000000000000" "nfc 131072 2 pn533_usb,pn533, Live 0x0000000000000000" "ext4 1036288 1 - Live 0x0000000000000000"
mkdir -p blocked/proc/812/fd; echo pcscd > blocked/proc/812/comm
ln -s /dev/null blocked/proc/812/fd/0; ln -s socket:[23456] blocked/proc/812/fd/3; ln -s /dev/bus/usb/001/005 blocked/proc/812/fd/7
mkdir -p blocked/usr/lib/x86_64-linux-gnu/pkgconfig blocked/usr/sbin
printf 'prefix=/usr\nName: libnfc\nDescription: NFC library\nVersion: 1.8.0\nLibs: -lnfc\n' > blocked/usr/lib/x86_64-linux-gnu/pkgconfig/libnfc.pc
: > blocked/usr/lib/x86_64-linux-gnu/libpcsclite.so.1.0.0; : > blocked/usr/sbin/pcscd
mkdir -p blocked/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents; : > blocked/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist

# sony: an RC-S380 (no stack drives it) and an RC-S300 (PC/SC only) with pcsc-lite absent
rm -rf sony; common sony
usb sony 1-2 054c 06c1 1 6 "RC-S380/S"
usb sony 1-5 054c 0dc8 1 7 "RC-S300/S"
ln -s ../../../../../bus/usb/drivers/port100 sony/sys/bus/usb/devices/1-2:1.0/driver
dpkg sony libnfc6=1.8.0-2 libpcsclite1=1.9.9-2
modules sony "port100 32768 0 - Live 0x0000000000000000" "nfc_digital 24576 1 port100, Live 0x0000000000000000" "nfc 131072 2 port100,nfc_digital, Live 0x0000000000000000"

# bare: no reader at all, no /proc/modules, nothing installed
rm -rf bare; common bare
usb bare 1-3 046d c31c 1 2 "USB Keyboard"
