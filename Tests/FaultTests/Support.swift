import FeliCa
import FeliCaLibNFC
import FeliCaEmulators
import FeliCaSimulation
import Foundation
import TestSupport
import Testing

/// A card with one cyclic read-write service readable and writable without a key (090D
/// style, here 100D), whose records show how many writes reached the card: each write to
/// block 0 adds a record and pushes the oldest out.
enum WritableCard {
    static let service: ServiceCode = 0x100D
    static let records: [[UInt8]] = (0..<5).map { [UInt8](repeating: UInt8(0x10 + $0), count: 16) }

    static var image: CardImage {
        CardImage(systems: [
            CardImage.System(code: 0x0003, idm: IDm(rawValue: 0x0101_1203_0000_0001), services: [
                CardImage.Service(code: service, blocks: records)
            ])
        ])
    }

    /// The records the card holds now.
    static func stored(_ card: VirtualCard) -> [[UInt8]] {
        card.image.systems[0].services[0].blocks ?? []
    }
}
