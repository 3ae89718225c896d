import FeliCaDelivery
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test.
func scratchDirectory() -> String {
    var template = Array("/tmp/felica-spool-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil)
    return String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
}

@Suite struct SpoolTests {
    @Test func keepsOrderAcrossReopening() throws {
        let dir = scratchDirectory() + "/spool"
        do {
            let spool = try Spool(directory: dir, limit: 10)
            for n in 1...3 { #expect(try spool.append(Array("m\(n)".utf8))) }
            let first = try spool.oldest()
            #expect(first?.body == Array("m1".utf8))
            try spool.remove(first!.sequence)
        }
        // A second process (here: a second open after the first closed) finds the rest, in order.
        let again = try Spool(directory: dir, limit: 10)
        #expect(again.count == 2)
        let next = try again.oldest()
        #expect(next?.body == Array("m2".utf8))
        #expect(try again.append(Array("m4".utf8)))
        try again.remove(next!.sequence)
        let third = try again.oldest()
        #expect(third?.body == Array("m3".utf8))
    }

    @Test func refusesWhenFullAndSaysSo() throws {
        let spool = try Spool(directory: scratchDirectory() + "/s", limit: 2)
        #expect(try spool.append([1]))
        #expect(try spool.append([2]))
        let third = try spool.append([3])
        #expect(third == false)
        #expect(spool.count == 2)
    }

    @Test func oneProcessAtATime() throws {
        let dir = scratchDirectory() + "/s"
        let held = try Spool(directory: dir, limit: 2)
        // flock locks belong to the open file: a second open in the same process conflicts too.
        #expect(throws: DeliveryError(.spoolBusy, "")) { try Spool(directory: dir, limit: 2) }
        _ = held
    }

    @Test func privateFilesUnderAnyUmask() throws {
        let old = umask(0o022)
        defer { umask(old) }
        let dir = scratchDirectory() + "/a/b"
        let spool = try Spool(directory: dir, limit: 2)
        #expect(try spool.append([1]))
        var st = stat()
        stat(dir, &st)
        #expect(st.st_mode & 0o777 == 0o700)
        stat(dir + "/0000000000000001.msg", &st)
        #expect(st.st_mode & 0o777 == 0o600)
    }

    @Test func leftoverTemporaryFilesAreDropped() throws {
        let dir = scratchDirectory() + "/s"
        do { _ = try Spool(directory: dir, limit: 5) }
        let fd = open(dir + "/0000000000000007.tmp", O_WRONLY | O_CREAT, 0o600)
        close(fd)
        let spool = try Spool(directory: dir, limit: 5)
        #expect(spool.count == 0)
        #expect(access(dir + "/0000000000000007.tmp", F_OK) != 0)
    }
}

@Suite struct MQTTAddressTests {
    @Test(arguments: [
        ("mqtt://127.0.0.1/felica/taps", nil, "127.0.0.1", 1883, "felica/taps"),
        ("mqtt://kiosk@broker.local:8883/a", "kiosk", "broker.local", 8883, "a"),
        ("mqtt://[::1]:1884/t/u", nil, "::1", 1884, "t/u"),
    ] as [(String, String?, String, Int, String)])
    func parses(_ text: String, _ user: String?, _ host: String, _ port: Int, _ topic: String) throws {
        let a = try MQTTAddress(parsing: text)
        #expect(a.user == user && a.host == host && a.port == port && a.topic == topic)
    }

    @Test(arguments: [
        ("http://host/t", "does not start with mqtt://"),
        ("mqtts://host/t", "TLS"),
        ("mqtt://host", "no topic"),
        ("mqtt://host/", "topic is empty"),
        ("mqtt://host:0/t", "port"),
        ("mqtt://host:x/t", "port"),
        ("mqtt://u:pw@host/t", "a password does not go in the address"),
        ("mqtt://host/t/#", "wildcards"),
    ])
    func refuses(_ text: String, _ why: String) {
        do {
            _ = try MQTTAddress(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.reason.contains(why), "\(error.reason)")
            // The library names no option of the command line's; felica adds them.
            #expect(!error.reason.contains("--"), "\(error.reason)")
            #expect(error.code == (text.contains(":pw@") ? .passwordInAddress : .badDestination))
        }
    }
}
