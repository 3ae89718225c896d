import FeliCa
import FeliCaDelivery
import FeliCaDevices
import FeliCaLog
import FeliCaPCSC
import FeliCaTrace
import FeliCaUSB

/// What the command line adds to a library error when it prints it: the flag or command
/// that fixes it. Library errors carry a code and a plain reason and name no flag of ours;
/// the hint is chosen here by the error's code.
enum ErrorHints {
    /// After the note naming the reader used when several were found.
    static let chooseDevice = " — pass --device to choose"

    /// A history database error, with the option or command that fixes it.
    static func message(_ error: HistoryError) -> String {
        switch error.code {
        case .noDatabase: error.reason + "; check --db, or keep a card's records first with `felica log add`"
        case .notOurs, .notADatabase: error.reason + ": give --db a file of its own"
        case .newerSchema: error.reason + ", or another --db file"
        default: error.reason
        }
    }

    /// An order constraint the scheduler refused (a pair not among the codes, a code before
    /// itself, a cycle), naming the option the pairs came from.
    static func precedence(_ error: FeliCaError) -> String {
        "--before: " + error.reason
    }

    /// A reader or file error, with the command that checks the readers, the way to try the
    /// tool without one where no reader opened, or the option a file other than a trace is
    /// given with.
    static func message(_ error: FeliCaError) -> String {
        if let file = error.traceFileError {
            switch file.code {
            case .otherJSON: return error.reason + "; a trace is recorded with --trace"
            case .cardImage:
                let source = file.file
                return error.reason + ": a card image is read with --device virtual:" + (source.contains("/") || source.hasSuffix(".json") ? source : "./" + source)
            }
        }
        if error.deviceError?.code == .noReaderFound {
            return error.reason + """
                .
                  Run `felica devices` to check a reader is seen (`felica doctor` explains set-up problems).
                  To try the tool without hardware: felica balance --device virtual:suica
                """
        }
        if error.pcscError?.code == .accessDenied {
            return error.reason + ". A polkit rule lets a group in: see \"PC/SC readers and polkit\" in Docs/install.md (/usr/share/doc/felica/Docs/install.md)"
        }
        guard error.code == .noReader, error.pcscError?.code != .noService, !error.reason.contains("virtual:") else { return error.reason }
        let check = error.pcscError?.code == .noReaders ? ", then check it with `felica devices`"
            : error.usbError?.code == .notFound ? ", then run `felica devices`" : ""
        let said = error.reason + check
        return said + (said.hasSuffix(".") ? "" : ".") + " To try the tool without a reader: --device virtual:suica"
    }

    /// A row's state in `felica devices`, pointing to `felica doctor` where something keeps
    /// the stacks from the reader.
    static func state(_ availability: DeviceListing.Availability) -> String {
        if case .blocked = availability { availability.state + " (see felica doctor)" } else { availability.state }
    }

    /// A delivery error, with the option that fixes it.
    static func message(_ error: DeliveryError) -> String {
        switch error.code {
        case .spoolBusy: error.reason + ": give each watch its own --spool"
        case .passwordInAddress: error.reason + ": give it in a file with --mqtt-password-file"
        default: error.reason
        }
    }

    /// A device string or opening option that does not apply, naming the option.
    static func message(_ error: DeviceError) -> String {
        switch error.code {
        case .inapplicableOption: "--dialect: " + error.reason
        default: error.reason
        }
    }
}
