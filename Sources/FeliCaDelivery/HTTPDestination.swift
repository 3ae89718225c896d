internal import CCurl

/// An HTTP or HTTPS endpoint each message is POSTed to as `application/json`; a 2xx answer
/// acknowledges it. HTTPS is checked against the system's certificate authorities (libcurl's
/// defaults, never turned off); only `http` and `https` are followed, redirects are not.
///
/// `@unchecked Sendable`: the libcurl handle is used only on the owning ``Outbox``'s thread,
/// one call at a time (``Destination``'s contract); everything else is immutable.
public final class HTTPDestination: Destination, @unchecked Sendable {
    public let name: String
    private let curl: CurlEasy
    /// How long one try may take, connection included.
    public let timeout: Duration

    /// POSTs to `url` with `headers` (`Name: value` lines) added to the request's own.
    /// Throws `.badDestination` for a URL that is not `http://` or `https://` or a header
    /// line that is not `Name: value` on one line.
    public init(url: String, headers: [String] = [], timeout: Duration = .seconds(15)) throws(DeliveryError) {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > 8 else {
            throw DeliveryError(.badDestination, "'\(url)' is not an http:// or https:// URL")
        }
        for line in headers {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw DeliveryError(.badDestination, "the header '\(line)' is not 'Name: value' on one line")
            }
        }
        name = url
        self.timeout = timeout
        curl = try CurlEasy()
        let (seconds, attoseconds) = timeout.components
        do throws(CurlFailure) {
            try curl.set(CURLOPT_URL, url)
            try curl.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try curl.set(CURLOPT_NOSIGNAL, 1)
            try curl.set(CURLOPT_CONNECTTIMEOUT_MS, 5000)
            try curl.set(CURLOPT_TIMEOUT_MS, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
            try curl.set(CURLOPT_USERAGENT, "felica-watch")
            try curl.setHeaders(["Content-Type: application/json", "Expect:"] + headers)
            try curl.discardBody()
        } catch {
            throw DeliveryError(.badDestination, "\(url): \(error.reason)")
        }
    }

    public func deliver(_ body: [UInt8]) -> DeliveryAttempt {
        do throws(CurlFailure) {
            try curl.set(CURLOPT_POSTFIELDSIZE, body.count)
            try curl.set(CURLOPT_COPYPOSTFIELDS, String(decoding: body, as: UTF8.self))
            try curl.perform()
            let status = try curl.responseCode()
            return (200..<300).contains(status) ? .delivered : .failed("the server answered HTTP \(status)")
        } catch {
            return .failed(error.isCertificate ? "the server's certificate was refused: \(error.reason)" : error.reason)
        }
    }
}
