import Foundation
import Testing
@testable import TensorEngine

/// An engine without stored profiles measures its devices the first time it plans, stores them,
/// and a later engine reads them back without measuring again.
@Suite("First-use calibration")
struct FirstUseCalibrationTests {
    /// An engine of the host backends only (OpenCL's library made missing), on its own store.
    static func engine(store: URL, _ calibration: Calibration.FirstUse) -> Engine {
        Engine(
            openCLLibrary: OpenCLLibrary.load(path: "/nonexistent-tensorengine/libOpenCL.so.1"), profileStore: store,
            calibration: calibration)
    }

    static func temporaryStore() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("first-use-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("profiles.json")
    }

    @Test func calibratesOnceAndStores() throws {
        let store = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let first = Self.engine(store: store, .auto)
        let measured = first.profiles
        let openblas = try #require(measured[.openblas])
        #expect(openblas.calibrated)
        #expect(openblas.secondsPerOperation > 0 && openblas.secondsPerOperation < 1e-3)
        #expect(openblas.row(.matrixVector).gflops.count == 2, "one-row and few-row points")
        #expect(openblas.row(.window).gflops.count == 2, "56 × 56 and 112 × 112 depthwise points")
        #expect(measured[.naive]?.calibrated == false, "the reference keeps its default")
        #expect(FileManager.default.fileExists(atPath: store.path))
        // The stored profile is read back as it was measured: nothing is measured again.
        let second = Self.engine(store: store, .auto)
        #expect(second.profiles[.openblas] == openblas)
    }

    @Test func offKeepsTheDefaults() throws {
        let store = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let engine = Self.engine(store: store, .off)
        #expect(engine.profiles[.openblas]?.calibrated == false)
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }

    /// A store that cannot be written keeps the measured profiles for this engine, with a warning.
    @Test func anUnwritableStoreKeepsProfilesInMemory() throws {
        let blocker = try Self.temporaryStore().deletingLastPathComponent().appendingPathComponent("file")
        defer { try? FileManager.default.removeItem(at: blocker.deletingLastPathComponent()) }
        try Data("not a folder".utf8).write(to: blocker)
        var warnings: [String] = []
        let profiles = Calibration.calibrateOnFirstUse(
            [OpenBLASBackend()], [.openblas: OpenBLASBackend().defaultProfile],
            store: blocker.appendingPathComponent("profiles.json")
        ) { warnings.append($0) }
        #expect(profiles[.openblas]?.calibrated == true)
        #expect(warnings.contains { $0.contains("could not store") }, "\(warnings)")
    }

    /// Profiles measured while the cores were busy are marked, kept for this process, and stored;
    /// a quiet measurement leaves them unmarked.
    @Test func aBusyMachineMarksTheProfiles() throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        try #require(cores > 1, "one core cannot be found busy by its scaling")
        let store = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        var warnings: [String] = []
        let busy = Calibration.calibrateOnFirstUse(
            [OpenBLASBackend()], [.openblas: OpenBLASBackend().defaultProfile], store: store,
            warn: { warnings.append($0) }, availability: { 1.0 })
        let marked = try #require(busy[.openblas]?.measuredOnBusyMachine)
        #expect(abs(marked.timeIntervalSinceNow) < 60)
        #expect(warnings.contains { $0.contains("busy") }, "\(warnings)")
        #expect(ProfileStore.load(from: store).values.first?.measuredOnBusyMachine == marked)
        var quiet = [OpenBLASBackend().defaultProfile]
        #expect(Calibration.markIfBusy(&quiet, scaling: 0.9 * Double(cores), cores: cores) == nil)
        #expect(quiet[0].measuredOnBusyMachine == nil)
        #expect(Calibration.markIfBusy(&quiet, scaling: 0.7 * Double(cores), cores: cores) != nil)
        #expect(quiet[0].measuredOnBusyMachine != nil)
        var single = [OpenBLASBackend().defaultProfile]
        #expect(Calibration.markIfBusy(&single, scaling: 1, cores: 1) == nil, "one core is never found busy")
    }

    /// A default profile is measured; a measured one is kept, unless a busy machine measured it
    /// ten minutes ago or more.
    @Test func whichProfilesAreMeasuredAgain() throws {
        var profile = OpenBLASBackend().defaultProfile
        #expect(profile.wantsCalibration())
        profile.calibrated = true
        #expect(!profile.wantsCalibration())
        let now = Date()
        profile.measuredOnBusyMachine = now.addingTimeInterval(-Calibration.busyRetrySeconds + 5)
        #expect(!profile.wantsCalibration(at: now))
        profile.measuredOnBusyMachine = now.addingTimeInterval(-Calibration.busyRetrySeconds)
        #expect(profile.wantsCalibration(at: now))
    }

    /// An engine whose stored profile a busy machine measured long ago measures it again on first
    /// use; one measured recently is read as it is.
    @Test func anOldBusyProfileIsMeasuredAgain() throws {
        let store = try Self.temporaryStore()
        defer { try? FileManager.default.removeItem(at: store.deletingLastPathComponent()) }
        let backend = OpenBLASBackend()
        var stale = backend.defaultProfile
        stale.calibrated = true
        stale.secondsPerOperation = 0.5
        let old = Date().addingTimeInterval(-2 * Calibration.busyRetrySeconds)
        stale.measuredOnBusyMachine = old
        try ProfileStore.save([stale], to: store)
        let remeasured = try #require(Self.engine(store: store, .auto).profiles[.openblas])
        #expect(remeasured.secondsPerOperation < 1e-3, "measured again, not the stored 0.5 s")
        #expect(remeasured.measuredOnBusyMachine != old)

        var recent = stale
        recent.measuredOnBusyMachine = Date()
        try ProfileStore.save([recent], to: store)
        #expect(Self.engine(store: store, .auto).profiles[.openblas] == recent)
    }
}
