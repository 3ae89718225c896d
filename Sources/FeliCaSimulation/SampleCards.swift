import FeliCa

/// Built-in sample cards with synthetic data (placeholder: a minimal transit card until
/// the card-profile work supplies the full set).
public enum SampleCards {
    public static let names = ["suica"]

    public static func image(named name: String) -> CardImage? {
        switch name {
        case "suica": suica
        default: nil
        }
    }

    static var suica: CardImage {
        var attr = [UInt8](repeating: 0, count: 16)
        attr[8] = 0x20; attr[11] = 0x52; attr[12] = 0x03  // balance 850
        let record: [UInt8] = [0x16, 0x01, 0x00, 0x02, 0x27, 0x3C, 0xE3, 0x22, 0xE3, 0x25, 0x52, 0x03, 0x00, 0x00, 0x0A, 0x00]
        return CardImage(
            pmm: PMm(rawValue: 0x100b_4b42_8485_d0ff),
            systems: [
                CardImage.System(code: .transit, idm: IDm(rawValue: 0x0101_1203_1234_5678),
                                 areas: [CardImage.Area(code: .root, end: 0xFFFE)],
                                 services: [
                                     .init(code: 0x008B, blocks: [attr]),
                                     .init(code: 0x090F, blocks: [record] + Array(repeating: [UInt8](repeating: 0, count: 16), count: 19)),
                                     .init(code: 0x1808, keyVersion: 0x0100, blockCount: 3),
                                 ])
            ])
    }
}
