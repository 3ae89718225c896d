import FeliCa

/// PC/SC Part 10 reader properties, as pcscd's drivers report them through `SCardControl`:
/// what the reader can carry, asked of the driver instead of guessed from the name.
///
/// The feature list (`CM_IOCTL_GET_FEATURE_REQUEST`) is `tag(1) 04 control-code(4, big-endian)`
/// per feature; `FEATURE_GET_TLV_PROPERTIES` (tag `12`) names the control code that returns
/// the properties, `tag(1) len(1) value(len, little-endian)` each.
public enum Part10 {
    /// Feature tag of `FEATURE_GET_TLV_PROPERTIES`.
    public static let getTLVProperties: UInt8 = 0x12

    /// Property tags this project reads.
    public enum Property {
        /// `PCSCv2_PART10_PROPERTY_dwMaxAPDUDataSize`: 0 = short APDUs only, else the
        /// longest extended APDU data (libccid: 0 for a short-APDU-level CCID reader,
        /// 65536 for TPDU and extended-APDU-level ones).
        public static let maxAPDUDataSize: UInt8 = 0x0A
        /// `PCSCv2_PART10_PROPERTY_wIdVendor`, `wIdProduct`: the USB IDs.
        public static let vendorID: UInt8 = 0x0B
        public static let productID: UInt8 = 0x0C
    }

    /// The control code of feature `tag` in a feature list; nil when the driver lacks it.
    public static func controlCode(of tag: UInt8, in list: [UInt8]) throws(FeliCaError) -> UInt32? {
        var r = ByteReader(list[...], frame: "PC/SC feature list")
        while !r.isAtEnd {
            let t = try r.readUInt8("feature tag")
            let length = try r.readUInt8("feature length")
            guard length == 4 else {
                throw FeliCaError(.invalidField, "PC/SC feature list: feature \(Hex.encode([t], uppercase: true)) has length \(length), expected 4")
            }
            let code = UInt32(try r.readUInt16(.bigEndian, "feature control code")) << 16
                | UInt32(try r.readUInt16(.bigEndian, "feature control code"))
            if t == tag { return code }
        }
        return nil
    }

    /// Every property of a TLV property list, by tag, values read little-endian.
    public static func properties(_ list: [UInt8]) throws(FeliCaError) -> [UInt8: UInt64] {
        var r = ByteReader(list[...], frame: "PC/SC TLV properties")
        var out: [UInt8: UInt64] = [:]
        while !r.isAtEnd {
            let tag = try r.readUInt8("property tag")
            let length = Int(try r.readUInt8("property length"))
            let value = try r.readBytes(length, "value of property \(Hex.encode([tag], uppercase: true)) (\(length) bytes)")
            // Strings (sFirmwareID) and values wider than 8 bytes are not numbers.
            guard length <= 8 else { continue }
            out[tag] = value.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        return out
    }
}
