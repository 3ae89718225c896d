import FeliCa
import FeliCaCards
import FeliCaDelivery
import FeliCaSimulation
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What `watch --post` costs a reading: the spool's write (to a temporary file, fsync,
/// rename, fsync of the directory) and removal, per reading; and the delivery latency
/// from the Polling that found the card to the reading's arrival at an HTTP server on
/// 127.0.0.1 (an in-process server answering 200 at once), through the real outbox,
/// spool and libcurl, with the card read in between (the Suica sample, virtual card with
/// 212 kbps air time). The spool lives under `FELICA_BENCH_SPOOL_DIR` (default /var/tmp:
/// a disk, where fsync costs what it costs on a kiosk; /tmp may be memory).
func deliveryBenchmarks() async {
    guard section("delivery") else { return }
    let base = getenv("FELICA_BENCH_SPOOL_DIR").map { String(cString: $0) } ?? "/var/tmp"
    let dir = "\(base)/felica-delivery-bench-\(getpid())"
    defer { _ = system("rm -rf '\(dir)'") }
    let body = Array(#"{"id":"3493ca3d-db2c-4ae1-b309-65704044a259","event":"card","readAt":"2026-12-03T13:36:34Z","device":"usb","idm":"0101120312345678","purses":[{"profile":"transit-ic","system":"0003","balance":1234,"currency":"JPY"}],"elapsedMs":41.2}"#.utf8)

    // The spool alone.
    do {
        let spool = try Spool(directory: dir + "/spool", limit: 100_000)
        let clock = ContinuousClock()
        var appends: [Double] = [], removals: [Double] = []
        for _ in 0..<500 {
            let a = clock.now
            _ = try spool.append(body)
            let b = clock.now
            let m = try spool.oldest()!
            let c = clock.now
            try spool.remove(m.sequence)
            removals.append(millis(clock.now - c))
            appends.append(millis(b - a))
        }
        print("spool in \(base), \(body.count)-byte reading, 500 readings: append (on disk: write, fsync, rename, fsync dir) median \(fixed(median(appends), 2)) ms, p95 \(fixed(percentile(appends, 0.95), 2)) ms; removal after the acknowledgement median \(fixed(median(removals), 3)) ms")
    } catch {
        print("spool: \(error)")
    }

    // Tap to server.
    guard let server = BenchHTTPServer() else {
        print("cannot start the HTTP server on 127.0.0.1: skipped")
        return
    }
    do {
        let spool = try Spool(directory: dir + "/latency", limit: 100_000)
        let outbox = Outbox(spool: spool, destination: try HTTPDestination(url: "http://127.0.0.1:\(server.port)/taps"))
        let delivering = Task { await outbox.run() }
        defer { delivering.cancel() }
        let card = try VirtualCard.named("suica")
        let session = CardSession(transport: VirtualTransport(card: card, name: "virtual:suica", timing: .kbps212))
        let reader = CardReader(depth: .balance)
        let clock = ContinuousClock()
        var read: [Double] = [], spooled: [Double] = [], sent: [Double] = [], total: [Double] = []
        for i in 0..<200 {
            let tapped = clock.now
            _ = try await reader.read(session)
            let wasRead = clock.now
            _ = try outbox.add(body)
            let wasSpooled = clock.now
            var arrived: ContinuousClock.Instant?
            let deadline = clock.now + .seconds(5)
            while arrived == nil && clock.now < deadline {
                arrived = server.arrivals.withLock { $0.count > i ? $0[i] : nil }
                if arrived == nil { await Task.yield() }
            }
            guard let arrived else {
                print("reading \(i) did not arrive within 5 s")
                return
            }
            read.append(millis(wasRead - tapped))
            spooled.append(millis(wasSpooled - wasRead))
            sent.append(millis(arrived - wasRead))
            total.append(millis(arrived - tapped))
        }
        print("tap to server, 200 readings (median / p95 ms): card read \(fixed(median(read), 1)) / \(fixed(percentile(read, 0.95), 1)); spooled \(fixed(median(spooled), 2)) / \(fixed(percentile(spooled, 0.95), 2)); read to server (spool, outbox thread, libcurl, loopback; the POST often lands before add() has returned) \(fixed(median(sent), 2)) / \(fixed(percentile(sent, 0.95), 2)); total \(fixed(median(total), 1)) / \(fixed(percentile(total, 0.95), 1))")
    } catch {
        print("delivery: \(error)")
    }
}

/// The `p` quantile of `values` (nearest rank).
private func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

/// A minimal HTTP/1.1 server on 127.0.0.1 that answers every request 200 at once and
/// notes when each request's body had arrived. One connection at a time (libcurl keeps
/// one open).
private final class BenchHTTPServer: Sendable {
    let port: Int
    let arrivals = Mutex<[ContinuousClock.Instant]>([])
    private let listener: Int32

    init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { close(fd); return nil }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in self.serve() }
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            connectionLoop: while true {
                // One request: headers to the blank line, then Content-Length bytes.
                while true {
                    if let end = Self.headerEnd(pending) {
                        let head = String(decoding: pending[..<end], as: UTF8.self).lowercased()
                        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                            .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                        if pending.count >= end + 4 + length {
                            pending.removeFirst(end + 4 + length)
                            break
                        }
                    }
                    let n = read(connection, &buffer, buffer.count)
                    if n <= 0 { break connectionLoop }
                    pending += buffer[0..<n]
                }
                arrivals.withLock { $0.append(.now) }
                let reply = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = reply.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            }
            close(connection)
        }
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i }
        return nil
    }
}
