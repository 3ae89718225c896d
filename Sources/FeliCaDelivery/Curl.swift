internal import CCurl

/// libcurl's easy interface: one handle, one small wrapper per C call, its `CURLcode`
/// turned into words in one place. Used by one thread at a time (libcurl's rule for a
/// handle); the handle is cleaned up exactly once, in `deinit`.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    /// The request's header lines, owned here until replaced or the handle goes.
    private var headerList: UnsafeMutablePointer<curl_slist>?

    /// libcurl loaded (see ``loadLibcurl()``) and `curl_global_init`, once per process,
    /// before the first handle: nil when both went well, else why not.
    private static let unavailable: String? = {
        if let failure = loadLibcurl() { return failure }
        guard felica_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK else {
            return "libcurl could not be initialised (curl_global_init failed)"
        }
        return nil
    }()

    init() throws(DeliveryError) {
        if let unavailable = Self.unavailable { throw DeliveryError(.library, unavailable) }
        guard let handle = felica_curl_easy_init() else {
            throw DeliveryError(.library, "libcurl could not be initialised (curl_easy_init failed)")
        }
        self.handle = handle
    }

    deinit {
        felica_curl_easy_cleanup(handle)
        if let headerList { felica_curl_slist_free_all(headerList) }
    }

    /// `curl_easy_setopt` with a number.
    func set(_ option: CURLoption, _ value: Int) throws(CurlFailure) {
        try check(felica_curl_setopt_long(handle, option, value))
    }

    /// `curl_easy_setopt` with a string (libcurl copies it).
    func set(_ option: CURLoption, _ value: String) throws(CurlFailure) {
        try check(felica_curl_setopt_string(handle, option, value))
    }

    /// `CURLOPT_HTTPHEADER`: the request's extra header lines.
    func setHeaders(_ lines: [String]) throws(CurlFailure) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = felica_curl_slist_append(list, line) else {
                if let list { felica_curl_slist_free_all(list) }
                throw CurlFailure(code: CURLE_OUT_OF_MEMORY)
            }
            list = longer
        }
        try check(felica_curl_setopt_list(handle, CURLOPT_HTTPHEADER, list))
        if let headerList { felica_curl_slist_free_all(headerList) }
        headerList = list
    }

    /// `CURLOPT_WRITEFUNCTION`: the answer's body is read and dropped (libcurl would
    /// otherwise write it to standard output, which carries felica's results).
    func discardBody() throws(CurlFailure) {
        try check(felica_curl_setopt_write(handle) { _, size, count, _ in size * count })
    }

    /// `curl_easy_perform`: runs the request.
    func perform() throws(CurlFailure) {
        try check(felica_curl_easy_perform(handle))
    }

    /// `CURLINFO_RESPONSE_CODE`: the HTTP status of the last answer (0 when none came).
    func responseCode() throws(CurlFailure) -> Int {
        var code = 0
        try check(felica_curl_response_code(handle, &code))
        return code
    }

    private func check(_ code: CURLcode) throws(CurlFailure) {
        guard code == CURLE_OK else { throw CurlFailure(code: code) }
    }
}

/// Loads libcurl (`libcurl.so.4`), which felica does not link so that its start does not
/// pay for it: nil when loaded, else what failed and the package that brings it.
func loadLibcurl() -> String? {
    var message = [CChar](repeating: 0, count: 512)
    guard felica_curl_load(&message, message.count) != 0 else { return nil }
    let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "HTTP delivery needs libcurl, which could not be loaded (\(why)); "
        + "install the libcurl4 package (libcurl4t64 on Debian 13 and later)"
}

/// A `CURLcode` other than `CURLE_OK`, with libcurl's words for it.
struct CurlFailure: Error {
    let code: CURLcode
    /// `Couldn't connect to server`, `SSL peer certificate or SSH remote key was not OK`.
    var reason: String { String(cString: felica_curl_easy_strerror(code)) }
    /// Whether the certificate check refused the server.
    var isCertificate: Bool { code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE }
}
