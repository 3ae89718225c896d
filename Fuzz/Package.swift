// swift-tools-version: 6.0
import PackageDescription

// libFuzzer targets over the project's parsers. Built by scripts/fuzz.sh with
// `-sanitize=fuzzer,address -parse-as-library`; each target is one executable whose
// entry point is libFuzzer's `LLVMFuzzerTestOneInput`.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]  // warnings are errors from scripts/fuzz.sh

let package = Package(
    name: "felica-fuzz",
    dependencies: [.package(name: "felica", path: "..")],
    targets: [
        .target(name: "FuzzSupport", swiftSettings: strict),
        .executableTarget(
            name: "FuzzCodec",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzJSON",
            dependencies: ["FuzzSupport", .product(name: "FeliCaJSON", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzCardImage",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaSimulation", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzVirtualCard",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaCards", package: "felica"), .product(name: "FeliCaSimulation", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzArguments",
            dependencies: ["FuzzSupport", .product(name: "FeliCaCLI", package: "felica"), .product(name: "FeliCaSimCommands", package: "felica"),
                           .product(name: "FeliCaDevices", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzPN532",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaReaderCodecs", package: "felica"), .product(name: "FeliCaCards", package: "felica"), .product(name: "FeliCaSimulation", package: "felica"), .product(name: "FeliCaEmulators", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzPort100",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaReaderCodecs", package: "felica"), .product(name: "FeliCaCards", package: "felica"), .product(name: "FeliCaSimulation", package: "felica"), .product(name: "FeliCaEmulators", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzPCSC",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaReaderCodecs", package: "felica"), .product(name: "FeliCaCards", package: "felica"), .product(name: "FeliCaSimulation", package: "felica"), .product(name: "FeliCaEmulators", package: "felica"),
                           .product(name: "FeliCaPCSC", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzCards",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaCards", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzSession",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaCards", package: "felica"),
                           .product(name: "FeliCaSimulation", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzTrace",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaCards", package: "felica"),
                           .product(name: "FeliCaTrace", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzNDEF",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaNDEF", package: "felica")],
            swiftSettings: strict),
        .executableTarget(
            name: "FuzzPopulation",
            dependencies: ["FuzzSupport", .product(name: "FeliCa", package: "felica"), .product(name: "FeliCaScheduling", package: "felica")],
            swiftSettings: strict),
    ]
)
