// Benchmarks print figures; run with `swift run -c release Benchmarks [section ...]`.
// Sections: codec, session, libnfc, usb, nfcpy, order, pcsc, cards, memory, history, kiosk, delivery, startup;
// `readme` runs the sections the README quotes and ends with its performance table.
print("# felica benchmarks (release build expected; debug figures are meaningless)")
let startLine = machineLine()
print(startLine)
codecBenchmarks()
await sessionBenchmarks()
await libnfcBenchmarks()
await usbBenchmarks()
await nfcpyBenchmarks()
await orderBenchmarks()
await pcscBenchmarks()
await cardBenchmarks()
await memoryBenchmarks()
await historyBenchmarks()
await kioskBenchmarks()
await deliveryBenchmarks()
startupBenchmarks()
if readmeRun { printReadmeTable(startedWith: startLine) }
