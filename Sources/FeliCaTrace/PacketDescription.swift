import FeliCa

/// One-line readable renderings of packets, decoded by the codec, for `felica trace show`
/// and for divergence errors.
public enum PacketDescription {
    /// `Read Without Encryption IDm=0101120312345678 services=[090F] blocks=0…11`, or the
    /// hex with the reason the codec refused it.
    public static func command(_ packet: [UInt8]) -> String {
        do {
            return describe(try Command.decode(packet[...]))
        } catch {
            return "\(Hex.encode(packet)) (undecodable command: \(error.reason))"
        }
    }

    /// A response, decoded with the IDm its command addressed (so a wrong card shows up).
    public static func response(_ packet: [UInt8], to command: [UInt8]? = nil) -> String {
        let decoded = command.flatMap { try? Command.decode($0[...]) }
        do {
            return describe(try Response.decode(packet[...], expecting: decoded?.idm), to: decoded)
        } catch {
            return "\(Hex.encode(packet)) (undecodable response: \(error.reason))"
        }
    }

    public static func describe(_ command: Command) -> String {
        let name = command.code.description
        switch command {
        case .polling(let c):
            let request = switch c.requestCode {
            case .none: "none"
            case .systemCode: "system code"
            case .communicationPerformance: "communication performance"
            }
            return "\(name) system=\(c.systemCode) request=\(request) slots=\(c.timeSlot.slots)"
        case .requestService(let c):
            return "\(name) IDm=\(c.idm) nodes=\(list(c.nodes))"
        case .readWithoutEncryption(let c):
            return "\(name) IDm=\(c.idm) services=\(list(c.services)) blocks=\(blocks(c.blocks, services: c.services))"
        case .writeWithoutEncryption(let c):
            return "\(name) IDm=\(c.idm) services=\(list(c.services)) blocks=\(blocks(c.blocks, services: c.services)) data=\(c.data.count) bytes"
        case .searchServiceCode(let c):
            return "\(name) IDm=\(c.idm) index=\(c.index)"
        case .requestBlockInformation(let c):
            return "\(name) IDm=\(c.idm) nodes=\(list(c.nodes))"
        case .requestResponse, .requestSystemCode, .requestSpecificationVersion, .resetMode:
            return "\(name) IDm=\(command.idm.map { "\($0)" } ?? "?")"
        }
    }

    /// A response; with its `command`, a Polling reply's request data is named for what
    /// the command asked (system code or communication performance).
    public static func describe(_ response: Response, to command: Command? = nil) -> String {
        switch response {
        case .polling(let r):
            var s = "Polling response IDm=\(r.idm) PMm=\(r.pmm)"
            if case .polling(let c) = command, c.requestCode == .communicationPerformance, let rd = r.requestData {
                s += " performance=\(PacketFields.hex16(rd))"
            } else if let sc = r.systemCode {
                s += " system=\(sc)"
            }
            return s
        case .requestService(let r):
            let versions = r.keyVersions.map { v in v.map { PacketFields.hex16($0) } ?? "none" }
            return "Request Service response IDm=\(r.idm) keyVersions=[\(versions.joined(separator: ","))]"
        case .requestResponse(let r):
            return "Request Response response IDm=\(r.idm) mode=\(r.mode)"
        case .readWithoutEncryption(let r):
            return "Read Without Encryption response IDm=\(r.idm) \(r.status)" + (r.status.isSuccess ? " blocks=\(r.blockCount)" : "")
        case .writeWithoutEncryption(let r):
            return "Write Without Encryption response IDm=\(r.idm) \(r.status)"
        case .searchServiceCode(let r):
            return "Search Service Code response IDm=\(r.idm) " + (r.node.map { "\($0)" } ?? "end of list")
        case .requestSystemCode(let r):
            return "Request System Code response IDm=\(r.idm) systems=[\(r.systemCodes.map(\.description).joined(separator: ","))]"
        case .requestBlockInformation(let r):
            return "Request Block Information response IDm=\(r.idm) blockCounts=[\(r.blockCounts.map(String.init).joined(separator: ","))]"
        case .requestSpecificationVersion(let r):
            var s = "Request Specification Version response IDm=\(r.idm) \(r.status)"
            if let v = r.basicVersion { s += " version=\(PacketFields.hex16(v))" }
            return s
        case .resetMode(let r):
            return "Reset Mode response IDm=\(r.idm) \(r.status)"
        }
    }

    static func list(_ nodes: [NodeCode]) -> String {
        "[" + nodes.map(\.description).joined(separator: ",") + "]"
    }

    /// Block list elements as runs: `0…11` for one service, `090F:0…11,008B:0` for several.
    static func blocks(_ elements: [BlockListElement], services: [ServiceCode]) -> String {
        var runs: [(service: UInt8, first: UInt16, last: UInt16, mode: UInt8)] = []
        for e in elements {
            if let last = runs.last, last.service == e.serviceIndex, last.mode == e.accessMode, last.last &+ 1 == e.blockNumber {
                runs[runs.count - 1].last = e.blockNumber
            } else {
                runs.append((e.serviceIndex, e.blockNumber, e.blockNumber, e.accessMode))
            }
        }
        let prefixed = Set(elements.map(\.serviceIndex)).count > 1 || services.count > 1
        return runs.map { run in
            var s = ""
            if prefixed {
                s += Int(run.service) < services.count ? "\(services[Int(run.service)]):" : "#\(run.service):"
            }
            s += run.first == run.last ? "\(run.first)" : "\(run.first)…\(run.last)"
            if run.mode != 0 { s += "(mode \(run.mode))" }
            return s
        }.joined(separator: ",")
    }
}
