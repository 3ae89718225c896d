// swift-tools-version: 6.0
import PackageDescription

/// Every target: Swift 6 language mode. Warnings are made errors from the command line
/// (`-Xswiftc -warnings-as-errors`, as scripts/test.sh and scripts/package.sh build), so that
/// Swift 6.0's manifest reads this file and a package depending on this one builds without it.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "felica",
    products: [
        .library(name: "FeliCa", targets: ["FeliCa"]),
        .library(name: "FeliCaCards", targets: ["FeliCaCards"]),
        .library(name: "FeliCaNDEF", targets: ["FeliCaNDEF"]),
        .library(name: "FeliCaSecurity", targets: ["FeliCaSecurity"]),
        .library(name: "FeliCaTrace", targets: ["FeliCaTrace"]),
        .library(name: "FeliCaSimulation", targets: ["FeliCaSimulation"]),
        .library(name: "FeliCaEmulators", targets: ["FeliCaEmulators"]),
        .library(name: "FeliCaDevices", targets: ["FeliCaDevices"]),
        .library(name: "FeliCaScheduling", targets: ["FeliCaScheduling"]),
        .library(name: "FeliCaLibNFC", targets: ["FeliCaLibNFC"]),
        .library(name: "FeliCaPN532", targets: ["FeliCaPN532"]),
        .library(name: "FeliCaPCSC", targets: ["FeliCaPCSC"]),
        .library(name: "FeliCaReaderCodecs", targets: ["FeliCaReaderCodecs"]),
        .library(name: "FeliCaTransportSupport", targets: ["FeliCaTransportSupport"]),
        .library(name: "FeliCaFiles", targets: ["FeliCaFiles"]),
        .library(name: "FeliCaUSB", targets: ["FeliCaUSB"]),
        .library(name: "FeliCaJSON", targets: ["FeliCaJSON"]),
        .library(name: "FeliCaLog", targets: ["FeliCaLog"]),
        .library(name: "FeliCaDelivery", targets: ["FeliCaDelivery"]),
        .library(name: "FeliCaDiagnosis", targets: ["FeliCaDiagnosis"]),
        .library(name: "FeliCaCLI", targets: ["FeliCaCLI"]),
        .library(name: "FeliCaSimCommands", targets: ["FeliCaSimCommands"]),
        .executable(name: "felica", targets: ["felica"]),
        .executable(name: "felica-sim", targets: ["felica-sim"]),
    ],
    targets: [
        // Pure codec, card session and the Transport protocol: no Foundation, no I/O.
        .target(name: "FeliCa", swiftSettings: strict),
        // Small ordered JSON value type, parser (errors carry a JSON path) and printer.
        .target(name: "FeliCaJSON", swiftSettings: strict),
        // The readers' own protocols (PC/SC pseudo-APDUs, PN532 frames): pure codecs shared by
        // the transports, the emulators and the fuzzers. No Foundation, no I/O.
        .target(name: "FeliCaReaderCodecs", dependencies: ["FeliCa"], swiftSettings: strict),
        // What code over C stacks shares: one thread per device, the owned device, the USB
        // reader selector.
        .target(name: "FeliCaTransportSupport", swiftSettings: strict),
        // Files and file descriptors: whole-buffer reads and writes, text files, private
        // files and directories, atomic replacement.
        .target(name: "FeliCaFiles", swiftSettings: strict),
        // Card profiles, and card images read by them: the sample cards built with the
        // profiles' encoders, an image's outline naming its systems and brand. Images and the
        // virtual card themselves (FeliCaSimulation) know no profile.
        .target(name: "FeliCaCards", dependencies: ["FeliCa", "FeliCaSimulation", "FeliCaNDEF"], swiftSettings: strict),
        // NDEF on FeliCa (NFC Forum Type 3 Tag): the record codec, the attribute block, reading a
        // tag's message through a card session, its text and JSON renderings. No I/O of its own.
        .target(name: "FeliCaNDEF", dependencies: ["FeliCa", "FeliCaJSON"], swiftSettings: strict),
        .target(name: "FeliCaTrace", dependencies: ["FeliCa", "FeliCaJSON", "FeliCaFiles"], swiftSettings: strict),
        // Cards made of data: card images, the virtual card, the sample cards. Product, not test scaffolding.
        // OpenSSL's libcrypto loaded at first use (a C shim that dlopens libcrypto.so.3; its
        // header from libssl-dev), so that commands without the card key do not pay for it.
        .target(name: "CLibCrypto"),
        // The FeliCa Lite and Lite-S card key: session keys and MACs over 2-key Triple-DES from
        // OpenSSL's libcrypto (the only importer of CLibCrypto), and the mutual authentication
        // through a card session.
        .target(name: "FeliCaSecurity", dependencies: ["FeliCa", "CLibCrypto"], swiftSettings: strict),
        .target(name: "FeliCaSimulation", dependencies: ["FeliCa", "FeliCaJSON", "FeliCaNDEF", "FeliCaSecurity", "FeliCaTransportSupport"], swiftSettings: strict),
        // Stand-ins for readers: the PN532/RC-S956, RC-S380 and vpcd emulators and the servers that put them
        // on a pseudo-terminal, a umockdev USB bus or vpcd's socket. Only felica-sim and the tests link it.
        .target(name: "FeliCaEmulators", dependencies: ["FeliCa", "FeliCaReaderCodecs", "FeliCaSimulation", "FeliCaTransportSupport", "FeliCaFiles"], swiftSettings: strict),
        .target(name: "FeliCaScheduling", dependencies: ["FeliCa", "FeliCaCards", "FeliCaSimulation", "FeliCaJSON", "FeliCaFiles"], swiftSettings: strict),
        .systemLibrary(
            name: "CLibNFC", pkgConfig: "libnfc",
            providers: [.apt(["libnfc-dev"])]),
        .target(name: "FeliCaLibNFC", dependencies: ["FeliCa", "FeliCaReaderCodecs", "FeliCaTransportSupport", "CLibNFC"], swiftSettings: strict),
        // A PN532 on a serial line driven directly (HSU), without libnfc's fixed costs.
        .target(name: "FeliCaPN532", dependencies: ["FeliCa", "FeliCaReaderCodecs", "FeliCaTransportSupport", "FeliCaFiles"], swiftSettings: strict),
        // pcsc-lite (Debian's libpcsclite-dev): a C target rather than a system library, so no
        // pkg-config is read — its Cflags carry -pthread, which SwiftPM refuses (with a warning
        // on every build) in a package that depends on this one. include/ forwards the names
        // pcsc-lite's headers include each other by.
        .target(name: "CPCSCLite", linkerSettings: [.linkedLibrary("pcsclite")]),
        .target(name: "FeliCaPCSC", dependencies: ["FeliCa", "FeliCaReaderCodecs", "FeliCaTransportSupport", "CPCSCLite"], swiftSettings: strict),
        .systemLibrary(
            name: "CLibUSB", pkgConfig: "libusb-1.0",
            providers: [.apt(["libusb-1.0-0-dev"])]),
        // Sony RC-S380 (Port-100) over libusb.
        .target(name: "FeliCaUSB", dependencies: ["FeliCa", "FeliCaReaderCodecs", "FeliCaTransportSupport", "CLibUSB"], swiftSettings: strict),
        // Readers as a library: the device-string grammar, opening any device from it, the default
        // reader, listing, waiting for a card and the watch loop (taps).
        .target(
            name: "FeliCaDevices",
            dependencies: ["FeliCa", "FeliCaCards", "FeliCaSimulation", "FeliCaTrace", "FeliCaLibNFC", "FeliCaPN532", "FeliCaPCSC", "FeliCaUSB", "FeliCaReaderCodecs", "FeliCaTransportSupport"],
            swiftSettings: strict),
        // SQLite loaded at first use (a C shim that dlopens libsqlite3.so.0; its header from
        // libsqlite3-dev), so that commands keeping no history do not pay for it.
        .target(name: "CSQLite"),
        // History kept across readings: SQLite database, merge by card and sequence, CSV export.
        .target(name: "FeliCaLog", dependencies: ["FeliCa", "FeliCaCards", "FeliCaFiles", "CSQLite"], swiftSettings: strict),
        // libcurl loaded at first use (dlopen), not linked: only its header (libcurl4-openssl-dev)
        // is read at build time, so the start of every other command does not pay for it.
        .target(name: "CCurl"),
        // libmosquitto likewise loaded at first use; only its header (libmosquitto-dev) is read.
        .target(name: "CMosquitto"),
        // Readings sent on (watch --post, --mqtt, --exec): a durable on-disk spool delivered
        // in order, HTTP through libcurl, MQTT through libmosquitto, a command per reading.
        .target(
            name: "FeliCaDelivery", dependencies: ["FeliCaJSON", "FeliCaTransportSupport", "FeliCaFiles", "CCurl", "CMosquitto"],
            swiftSettings: strict),
        // What this machine needs to reach a reader: the known reader models, a read-only snapshot of
        // the host (USB devices, kernel modules, daemons, udev rules, permissions) and the verdicts
        // with their fixes. Pure apart from reading files under one root.
        .target(
            name: "FeliCaDiagnosis", dependencies: ["FeliCa", "FeliCaDevices", "FeliCaFiles", "FeliCaUSB"],
            swiftSettings: strict),
        .target(
            name: "FeliCaCLI",
            dependencies: [
                "FeliCa", "FeliCaJSON", "FeliCaCards", "FeliCaNDEF", "FeliCaSecurity", "FeliCaTrace", "FeliCaSimulation", "FeliCaDevices",
                "FeliCaScheduling", "FeliCaLibNFC", "FeliCaPCSC", "FeliCaReaderCodecs", "FeliCaTransportSupport", "FeliCaFiles", "FeliCaUSB",
                "FeliCaLog", "FeliCaDiagnosis", "FeliCaDelivery",
            ],
            swiftSettings: strict),
        // `felica-sim`'s commands: the emulators served to the real stacks, over the CLI's parser.
        .target(
            name: "FeliCaSimCommands",
            dependencies: ["FeliCa", "FeliCaCards", "FeliCaCLI", "FeliCaDevices", "FeliCaEmulators", "FeliCaSimulation", "FeliCaReaderCodecs", "FeliCaTransportSupport"],
            swiftSettings: strict),
        .executableTarget(name: "felica", dependencies: ["FeliCaCLI"], swiftSettings: strict),
        .executableTarget(name: "felica-sim", dependencies: ["FeliCaSimCommands"], swiftSettings: strict),
        // The program of Docs/library.md: readers opened by their strings with library products only.
        .executableTarget(
            name: "LibraryExample", dependencies: ["FeliCa", "FeliCaCards", "FeliCaDevices"],
            path: "Examples/LibraryExample", swiftSettings: strict),
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["FeliCa", "FeliCaSimulation", "FeliCaEmulators", "FeliCaDevices", "FeliCaCards", "FeliCaScheduling", "FeliCaCLI", "FeliCaPCSC", "FeliCaPN532", "FeliCaReaderCodecs", "FeliCaLog", "FeliCaDelivery"],
            path: "Benchmarks", swiftSettings: strict),

        // What the test suites share: running the built executables, the PN532 emulator with
        // libnfc opened on it. Test-only; no product ships it.
        .target(
            name: "TestSupport", dependencies: ["FeliCa", "FeliCaLibNFC", "FeliCaSimulation", "FeliCaEmulators"],
            path: "Tests/TestSupport", swiftSettings: strict),
        // The codec, and the session through the virtual card.
        .testTarget(name: "FeliCaTests", dependencies: ["FeliCa", "FeliCaSimulation"], swiftSettings: strict),
        .testTarget(name: "FeliCaReaderCodecsTests", dependencies: ["FeliCa", "FeliCaReaderCodecs"], swiftSettings: strict),
        .testTarget(name: "FeliCaTransportSupportTests", dependencies: ["FeliCaTransportSupport"], swiftSettings: strict),
        .testTarget(name: "FeliCaJSONTests", dependencies: ["FeliCaJSON"], swiftSettings: strict),
        .testTarget(name: "FeliCaSimulationTests", dependencies: ["FeliCa", "FeliCaSimulation", "FeliCaSecurity", "FeliCaEmulators", "FeliCaReaderCodecs", "FeliCaCards", "FeliCaJSON", "FeliCaNDEF"], swiftSettings: strict),
        .testTarget(name: "FeliCaLogTests", dependencies: ["FeliCa", "FeliCaCards", "FeliCaLog", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(name: "FeliCaDeliveryTests", dependencies: ["FeliCaDelivery", "FeliCaJSON"], swiftSettings: strict),
        .testTarget(name: "FeliCaNDEFTests", dependencies: ["FeliCa", "FeliCaNDEF", "FeliCaJSON", "FeliCaCards", "FeliCaSimulation"], swiftSettings: strict),
        .testTarget(name: "FeliCaCardsTests", dependencies: ["FeliCa", "FeliCaCards", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(name: "FeliCaTraceTests", dependencies: ["TestSupport", "FeliCa", "FeliCaTrace", "FeliCaSimulation", "FeliCaEmulators", "FeliCaCards", "FeliCaNDEF"], swiftSettings: strict),
        .testTarget(name: "FeliCaSchedulingTests", dependencies: ["FeliCa", "FeliCaScheduling", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(name: "FeliCaLibNFCTests", dependencies: ["TestSupport", "FeliCa", "FeliCaCards", "FeliCaReaderCodecs", "FeliCaLibNFC", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(
            name: "FeliCaDevicesTests", dependencies: ["TestSupport", "FeliCaDevices", "FeliCa", "FeliCaCards", "FeliCaSimulation", "FeliCaEmulators", "FeliCaTrace"],
            swiftSettings: strict),
        // The RC-S380 protocol (Port-100 driver) against its emulator, in-process.
        .testTarget(name: "FeliCaUSBTests", dependencies: ["FeliCa", "FeliCaCards", "FeliCaReaderCodecs", "FeliCaUSB", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(name: "FeliCaPN532Tests", dependencies: ["TestSupport", "FeliCa", "FeliCaCards", "FeliCaReaderCodecs", "FeliCaPN532", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        .testTarget(name: "FeliCaPCSCTests", dependencies: ["FeliCa", "FeliCaCards", "FeliCaReaderCodecs", "FeliCaPCSC", "FeliCaSimulation", "FeliCaEmulators"], swiftSettings: strict),
        // Faults through the real stacks: removal, late and garbled frames, ambiguous writes.
        .testTarget(
            name: "FaultTests",
            dependencies: ["TestSupport", "FeliCa", "FeliCaReaderCodecs", "FeliCaCards", "FeliCaSimulation", "FeliCaEmulators", "FeliCaLibNFC"],
            swiftSettings: strict),
        // The code shown in Docs/library.md, compiled and run (and checked to match the guide).
        .testTarget(
            name: "DocsTests",
            dependencies: ["TestSupport", "FeliCa", "FeliCaDevices", "FeliCaSimulation", "FeliCaEmulators", "FeliCaCards", "FeliCaNDEF", "FeliCaTrace", "FeliCaLibNFC", "FeliCaPCSC"],
            exclude: ["Traces"], swiftSettings: strict),
        .testTarget(
            name: "FeliCaCLITests", dependencies: ["TestSupport", "FeliCaCLI", "FeliCaCards", "FeliCaDiagnosis", "FeliCaSimCommands", "FeliCaDevices", "FeliCa", "FeliCaSimulation", "FeliCaEmulators", "FeliCaUSB", "FeliCaJSON"],
            exclude: ["Golden", "Fixtures"], swiftSettings: strict),
    ]
)
