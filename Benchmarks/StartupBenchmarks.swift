import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `felica --version` run as a new process over and over: the start-up a user waits for
/// before any command does its work (loading, relocation, the Swift runtime, parsing).
///
/// The binary is `FELICA_BIN` (e.g. the packaged `/usr/bin/felica`), else the `felica`
/// beside this executable (`swift build -c release --product felica` puts it there);
/// `FELICA_BENCH_RUNS` runs (default 100) after 5 unmeasured ones. Wall time is from spawn
/// to reaped; CPU time is the child's user + system time from `wait4`. The load average is
/// printed before and after, since other work on the machine moves the wall figures.
func startupBenchmarks() {
    guard section("startup") else { return }
    let binary = getenv("FELICA_BIN").map { String(cString: $0) } ?? siblingBinary("felica")
    guard access(binary, X_OK) == 0 else {
        print("no felica binary at \(binary) (build it, or set FELICA_BIN): skipped")
        return
    }
    let runs = getenv("FELICA_BENCH_RUNS").flatMap { Int(String(cString: $0)) }.map { max(1, $0) } ?? 100
    print("binary: \(binary)")
    print(machineLine(at: "the start of this section"))
    for _ in 0..<5 { _ = spawnAndReap(binary, ["--version"]) }
    var walls: [Duration] = [], cpus: [Duration] = []
    for _ in 0..<runs {
        guard let run = spawnAndReap(binary, ["--version"]) else {
            print("\(binary) --version did not exit 0: skipped")
            return
        }
        walls.append(run.wall)
        cpus.append(run.cpu)
    }
    walls.sort()
    cpus.sort()
    func quantile(_ d: [Duration], _ q: Double) -> Duration { d[min(d.count - 1, Int((Double(d.count - 1) * q).rounded()))] }
    print(pad("felica --version, wall (spawn to exit)", 52)
          + "median " + ms(quantile(walls, 0.5)) + ", p90 " + ms(quantile(walls, 0.9)) + ", min " + ms(walls[0]) + "  (\(runs) runs)")
    print(pad("felica --version, CPU (user + system)", 52)
          + "median " + ms(quantile(cpus, 0.5)) + ", p90 " + ms(quantile(cpus, 0.9)) + ", min " + ms(cpus[0]))
    print(machineLine(at: "the end of this section"))
}

/// A program built beside this executable.
private func siblingBinary(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return name }
    let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[..<slash]) + "/" + name
}

/// Runs `binary` with its output to /dev/null; the wall time from spawn to reaped and the
/// child's CPU time, or nil when it could not start or did not exit 0.
private func spawnAndReap(_ binary: String, _ arguments: [String]) -> (wall: Duration, cpu: Duration)? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    let clock = ContinuousClock()
    let start = clock.now
    var pid: pid_t = 0
    guard posix_spawn(&pid, binary, &actions, nil, argv, environ) == 0 else { return nil }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { return nil }
    }
    let wall = clock.now - start
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else { return nil }
    func duration(_ t: timeval) -> Duration { .seconds(Int64(t.tv_sec)) + .microseconds(Int64(t.tv_usec)) }
    return (wall, duration(usage.ru_utime) + duration(usage.ru_stime))
}
