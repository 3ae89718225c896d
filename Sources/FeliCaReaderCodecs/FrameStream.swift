import FeliCa

/// Bytes received on a serial or USB link, cut into frames by a codec's `parse`: what the
/// PN532 and Port-100 stream parsers share. Skips bytes before a preamble, waits for frames
/// still arriving, and after a broken frame drops only its preamble, since a real frame may
/// begin inside the broken one.
struct FrameStream: Sendable {
    /// The bytes every frame starts with.
    let preamble: [UInt8]
    private var buffer: [UInt8] = []
    /// Bytes skipped so far while looking for a preamble.
    private(set) var skippedBytes = 0

    init(preamble: [UInt8]) {
        self.preamble = preamble
    }

    var pendingCount: Int { buffer.count }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    mutating func reset() {
        buffer.removeAll()
    }

    /// The next frame (or the error of a broken one), or nil when more bytes are needed.
    /// `parse` returns a frame and the bytes it spans, or throws `.truncated` for "not yet".
    mutating func next<Frame>(_ parse: (ArraySlice<UInt8>) throws(FeliCaError) -> (Frame, Int)) -> Result<Frame, FeliCaError>? {
        guard let start = preambleIndex() else {
            // Keep a tail that may be the start of a preamble.
            var keep = min(preamble.count - 1, buffer.count)
            while keep > 0 && !buffer.suffix(keep).elementsEqual(preamble.prefix(keep)) { keep -= 1 }
            skippedBytes += buffer.count - keep
            buffer.removeFirst(buffer.count - keep)
            return nil
        }
        skippedBytes += start
        buffer.removeFirst(start)
        do throws(FeliCaError) {
            let (frame, count) = try parse(buffer[...])
            buffer.removeFirst(count)
            return .success(frame)
        } catch {
            if error.code == .truncated { return nil }
            buffer.removeFirst(preamble.count)
            return .failure(error)
        }
    }

    private func preambleIndex() -> Int? {
        guard buffer.count >= preamble.count else { return nil }
        return (0...(buffer.count - preamble.count)).first { i in
            buffer[i..<(i + preamble.count)].elementsEqual(preamble)
        }
    }
}
