internal import CLibCrypto
import FeliCa

/// One small wrapper per libcrypto call: the only place that touches C. Each turns
/// OpenSSL's 1-for-success convention into a thrown `FeliCaError` naming the call.
enum LibCrypto {
    /// libcrypto loaded (`libcrypto.so.3`), once per process: nil when loaded, else what failed
    /// and the package that brings it. felica does not link libcrypto, so that a start that
    /// needs no card key does not pay for binding it.
    private static let unavailable: String? = {
        var message = [CChar](repeating: 0, count: 512)
        guard felica_crypto_load(&message, message.count) != 0 else { return nil }
        let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "the FeliCa Lite-S card key needs OpenSSL's libcrypto, which could not be loaded (\(why)); "
            + "install the libssl3 package (libssl3t64 on Debian 13 and later)"
    }()

    /// Throws when libcrypto could not be loaded; every other call here needs it loaded.
    static func load() throws(FeliCaError) {
        if let unavailable { throw FeliCaError(.unsupported, unavailable) }
    }

    /// `EVP_CIPHER_CTX_new`.
    static func newContext() throws(FeliCaError) -> OpaquePointer {
        guard let context = felica_EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
        return context
    }

    /// `EVP_CIPHER_CTX_free`.
    static func free(_ context: OpaquePointer) { felica_EVP_CIPHER_CTX_free(context) }

    /// `EVP_EncryptInit_ex` with `EVP_des_ede_cbc()` (2-key Triple-DES, EDE, CBC mode).
    static func initDESEDECBC(_ context: OpaquePointer, key: [UInt8], iv: [UInt8]) throws(FeliCaError) {
        guard let cipher = felica_EVP_des_ede_cbc() else { throw failure("EVP_des_ede_cbc") }
        let ok = key.withUnsafeBufferPointer { k in
            iv.withUnsafeBufferPointer { v in felica_EVP_EncryptInit_ex(context, cipher, nil, k.baseAddress, v.baseAddress) }
        }
        guard ok == 1 else { throw failure("EVP_EncryptInit_ex(DES-EDE-CBC)") }
    }

    /// `EVP_CIPHER_CTX_set_padding`: 0 turns padding off (the input is whole blocks).
    static func setPadding(_ context: OpaquePointer, _ on: Bool) throws(FeliCaError) {
        guard felica_EVP_CIPHER_CTX_set_padding(context, on ? 1 : 0) == 1 else { throw failure("EVP_CIPHER_CTX_set_padding") }
    }

    /// `EVP_EncryptUpdate`: the ciphertext of `input`.
    static func update(_ context: OpaquePointer, _ input: [UInt8]) throws(FeliCaError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: input.count + 8)
        var written: Int32 = 0
        let ok = input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in
                felica_EVP_EncryptUpdate(context, o.baseAddress, &written, i.baseAddress, Int32(input.count))
            }
        }
        guard ok == 1 else { throw failure("EVP_EncryptUpdate") }
        return Array(out.prefix(Int(written)))
    }

    /// `EVP_EncryptFinal_ex`: what is left (nothing without padding, when the input was whole blocks).
    static func final(_ context: OpaquePointer) throws(FeliCaError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        var written: Int32 = 0
        let ok = out.withUnsafeMutableBufferPointer { o in felica_EVP_EncryptFinal_ex(context, o.baseAddress, &written) }
        guard ok == 1 else { throw failure("EVP_EncryptFinal_ex") }
        return Array(out.prefix(Int(written)))
    }

    /// The error for a failed call, with OpenSSL's own reason (`ERR_get_error`,
    /// `ERR_error_string_n`) when it queued one.
    private static func failure(_ call: String) -> FeliCaError {
        let code = felica_ERR_get_error()
        guard code != 0 else { return FeliCaError(.unsupported, "libcrypto: \(call) failed") }
        var text = [CChar](repeating: 0, count: 256)
        text.withUnsafeMutableBufferPointer { felica_ERR_error_string_n(code, $0.baseAddress, $0.count) }
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return FeliCaError(.unsupported, "libcrypto: \(call) failed: \(reason)")
    }
}

/// 2-key Triple-DES (DES-EDE: K1, K2, K1) in CBC mode without padding, from OpenSSL's
/// libcrypto: the cipher of the FeliCa Lite and Lite-S session key and MACs.
public enum TripleDES {
    /// The CBC encryption of `data` (a whole number of 8-byte blocks) under the 16-byte
    /// `key` (K1 ‖ K2) from the 8-byte `iv`.
    public static func encryptCBC(_ data: [UInt8], key: [UInt8], iv: [UInt8]) throws(FeliCaError) -> [UInt8] {
        guard key.count == 16 else { throw FeliCaError(.invalidArgument, "Triple-DES: the key is \(key.count) bytes, not 16") }
        guard iv.count == 8 else { throw FeliCaError(.invalidArgument, "Triple-DES: the IV is \(iv.count) bytes, not 8") }
        guard data.count % 8 == 0 else { throw FeliCaError(.invalidArgument, "Triple-DES: \(data.count) bytes is not a whole number of 8-byte blocks") }
        try LibCrypto.load()
        let context = try LibCrypto.newContext()
        defer { LibCrypto.free(context) }
        try LibCrypto.initDESEDECBC(context, key: key, iv: iv)
        try LibCrypto.setPadding(context, false)
        return try LibCrypto.update(context, data) + LibCrypto.final(context)
    }
}
