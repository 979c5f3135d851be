import BearingCompass
import BearingAttitude
import BearingModel
import BearingWire
import BearingPublishing
import BearingCalibration
import BearingOnlineCalibration
import BearingPOSIX
import BearingService
import BearingLog
import BearingI2C
import BearingGPSD
import BearingSensors
import BearingMarine
import BearingRecording
import BearingConfig
import BearingSocketDoor
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's wiring, read top to bottom:
///
/// 1. sources on their own threads (`GPSDClient`, `MagnetometerReader`, `InertialReader`) report to
///    adapters, which send into the hub's sources (`PipelineSource`, `PipelineState`);
/// 2. every value enters the one pipeline queue (`PipelineInput` through `PipelineEntry`: a `sync` block on
///    the queue, run on the source's thread, no hop) — ordering, draining at shutdown and thread-safety have
///    that one answer whatever the config;
/// 3. the compass stages (`MagnetometerStage`: calibration, orientation, declination) turn samples into
///    attitudes; with an accelerometer + gyroscope, one `FusionStage` takes both sensors' samples instead;
/// 4. the `PublishingHub` runs the default, named and per-client operator chains and routes lines;
/// 5. the `SocketTransport` writes them to clients; the data log and journal take the default chains.
///
/// The two inputs are independent: a failing I2C bus never holds up the GPS path.
/// Unchecked Sendable: its wiring state (subscriptions, data log, source logs) is set up in start() and torn down in stop() by one caller, else touched only on the pipeline queue.
public final class Agent: @unchecked Sendable {

    public let config: AgentConfig
    private let logger: Logger
    /// The publishing core every door is a client of: the hub (chains, routing) and its queue, the one serial
    /// context for the pipelines.
    public let core: PublishingCore
    private var pipelineQueue: DispatchQueue { core.queue }
    private var hub: PipelineHub { core.hub }

    let gpsAdapter: GPSPublisherAdapter
    let gpsd: GPSDClient
    let magAdapter: SensorSubjects<MagneticSample>
    let reader: MagnetometerReader?
    let imuAdapter: SensorSubjects<InertialSample>
    /// The accelerometer + gyroscope; only with a magnetometer.
    let imuReader: InertialReader?
    /// Where the sources' values come from: the sensors and gpsd, or a recording.
    public let feed: Feed
    /// The black box; nil when it is off, and in a replay.
    public let recorder: BlackBoxRecorder?
    /// The pipeline's clock: live, or the replay's.
    public var clock: PipelineClock { core.clock }
    let input: PipelineInput
    /// How the config was made, for the black box; set before `start()`.
    public var origin: ConfigOrigin?
    private var frameTimer: DispatchSourceTimer?
    /// The calibration files in force (the magnetometer's; with an IMU the accelerometer's and the
    /// mounting level); nil without a magnetometer.
    public let calibrations: CalibrationFiles?
    /// The magnetometer's calibration in force.
    public var calibration: CalibrationStore? { calibrations?.magnetometer }
    /// The compass stage: the magnetometer's alone, or with an IMU the fusion's. Only touched on the pipeline queue.
    private var magnetometerStage: MagnetometerStage?
    private var fusionStage: FusionStage?
    /// The system's wall clock, which stamps the samples (`init`).
    private let wallClock: @Sendable () -> GPSTimestamp
    /// What the journal says of the samples' clock stepping (on the pipeline's clock).
    private var clockStepJournal = ClockStepJournal()
    /// What the journal says of GPS positions out of reach (`PositionJumpJournal`). On the pipeline queue.
    private var jumpJournal = PositionJumpJournal()
    /// Whose dates the journal has said are outside WMM2025's validity (the system clock's, the fixes'): once each.
    private var toldDates: Set<String> = []
    private var dataLog: DataLog?
    private var subscriptions: [HubSubscription] = []
    private var started = false

    /// Each only touched on the pipeline queue, where state changes arrive.
    private var gpsdLog = SourceStateLog(source: "gpsd", connecting: "connecting to gpsd", lost: "gpsd disconnected",
                                         stillLost: "gpsd still unavailable", stopped: "gpsd session closed")
    private var magnetometerLog = SourceStateLog(source: "magnetometer", connecting: "looking for the magnetometer",
                                                 lost: "magnetometer unavailable", stillLost: "magnetometer still unavailable",
                                                 stopped: "magnetometer stopped")
    private var imuLog = SourceStateLog(source: "imu", connecting: "looking for the accelerometer/gyroscope",
                                        lost: "accelerometer/gyroscope unavailable", stillLost: "accelerometer/gyroscope still unavailable",
                                        stopped: "accelerometer/gyroscope stopped")
    /// Each source's measured rate and failures, for HEALTH; touched on the pipeline queue only.
    private var sourceHealth: [String: SourceHealth] = [:]
    private var lastMagFailure: String?
    private var lastIMUFailure: String?
    /// Online calibration's state after its latest event, and the magnetometer's chip once a sample named it.
    private var onlineState: OnlineCalibrationState?
    /// What the journal says of interference episodes (at most a line a minute for a flapping source). On the pipeline queue.
    private var interferenceJournal = InterferenceJournal()
    /// The swing a client started (`?SWING={"action":"start"};`), its hub runs, and the last one's outcome (the
    /// SWING object); on the pipeline queue.
    private var swing: DaemonSwing?
    private var swingRuns: [HubSubscription] = []
    private var lastSwing: String?
    /// Online calibration's mode when a client's action changed it (`?CALIBRATION={"online":…};`); nil: the config's.
    private var onlineModeInForce: AutoCalibrationMode?
    /// Writes the online calibration's file off the pipeline queue, in the order of the changes.
    private let onlineKeeper = DispatchQueue(label: "bearing.online-calibration", qos: .utility)
    private var magnetometerChip: String?
    /// The magnetometer found (its first sample named it): what is learnt in place is kept with it.
    private var magnetometerSensor: SensorIdentity?

    /// Where the sources' values come from.
    public enum Feed: Sendable {
        /// gpsd and the sensors, recorded in the black box when `blackbox.enabled`.
        case live
        /// A recording (`Replayer` drives the sources); `startTime` is when it was made.
        case replay(startTime: GPSTimestamp)
    }

    /// `openBus` opens the magnetometer's (and the IMU's) bus by path (a `LinuxI2CBus`, or a simulated bus for the demo).
    /// `wallClock`: the system's wall clock, which stamps the sensors' samples (a test's own, to step it).
    public init(config: AgentConfig, logger: Logger,
                openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = { path throws(I2CError) in try LinuxI2CBus(path: path) },
                wallClock: @escaping @Sendable () -> GPSTimestamp = GPSTimestamp.now, feed: Feed = .live) {
        self.config = config
        self.wallClock = wallClock
        self.logger = logger
        self.feed = feed
        let clock: PipelineClock
        switch feed {
        case .live:
            clock = PipelineClock(.live)
            startTime = wallClock()
            recorder = config.blackbox.enabled ? BlackBoxRecorder(config: config.blackbox, logger: logger) : nil
        case .replay(let t):
            clock = PipelineClock(.replay)
            startTime = t
            recorder = nil
        }
        clock.setWallTime(startTime)
        let recording: @Sendable (RecordedSensor) -> (@Sendable (String) throws(I2CError) -> I2CBus) = { [recorder] sensor in
            guard let log = recorder?.transactions(sensor) else { return openBus }
            return { path throws(I2CError) in RecordingI2CBus(try openBus(path), log: log) }
        }
        gpsd = GPSDClient(configuration: config.gpsd)
        if config.magnetometer.enabled {
            reader = MagnetometerReader(configuration: config.magnetometer.reader, openBus: recording(.magnetometer), now: wallClock)
            calibrations = CalibrationFiles(config: config, logger: logger)
        } else {
            reader = nil
            calibrations = nil
        }
        imuReader = config.magnetometer.enabled && config.imu.enabled
            ? InertialReader(configuration: config.imu.reader, openBus: recording(.imu), now: wallClock) : nil
        // The sensors are listed once found (`wireReports`): with chip or address on auto, the endpoint is the bus alone until then.
        core = PublishingCore(defaults: config.pipelines, named: config.namedPipelines, devices: ["gpsd://\(config.gpsd.endpoint)"], release: Release.wireRelease, clock: clock)
        input = PipelineInput(entry: core.entry, clock: clock, recorder: recorder)
        // DEVICES lists the sensors in this order, whichever is found first.
        for source in ["magnetometer", "imu"] { core.hub.setDevice(nil, of: source) }
        gpsAdapter = GPSPublisherAdapter(input: input, initialState: .connecting(attempt: 0), echoes: config.nmea0183.echoGuard)
        magAdapter = SensorSubjects(.magnetometer, input: input, transactions: recorder?.magnetometerTransactions, time: { $0.time },
                                    initialState: .connecting(attempt: 0))
        imuAdapter = SensorSubjects(.imu, input: input, transactions: recorder?.imuTransactions, time: { $0.time },
                                    initialState: .connecting(attempt: 0))
        if let recorder {
            clock.observeTimers { [input] due, time in input.recordTimer(due: due, time: time) }
            _ = recorder
        }
        gpsd.delegate = gpsAdapter
        reader?.delegate = magAdapter
        imuReader?.delegate = imuAdapter
    }

    /// When the agent was made, or the recording was: the time of the sources' first STATE objects, and
    /// the date of a fallback position's declination.
    let startTime: GPSTimestamp

    /// Opens the data log, wires the stages and the hub, starts the sources. Throws (having started nothing)
    /// when the data log cannot be opened. The doors (the socket's too) are the `Daemon`'s.
    public func start() throws {
        try startPublishing()
        startSources()
    }

    /// The first half of `start()`: the data log and the wiring, no source yet — so that the doors can
    /// subscribe before the first value comes (`Daemon` opens them in between).
    public func startPublishing() throws {
        if let path = config.log.dataLog {
            dataLog = try DataLog(path: path, logger: logger)
        }
        wire()
        started = true
    }

    /// What the socket door's readers may ask beyond the hub: the calibration in force (reloaded on request) and
    /// the black box's ring.
    public var socketRequests: SocketDoor.Requests {
        var r = SocketDoor.Requests()
        if let calibrations {
            // On the pipeline queue: the object every reader is sent, online calibration's state included.
            r.calibration = { [weak self] reload in
                if reload {
                    let rejected = calibrations.reload(reason: "client request")
                    if !rejected.isEmpty { return .failure(SocketDoor.CalibrationRefused(rejected)) }
                }
                return .success(self?.calibrationObject(calibrations.status) ?? WireEncoding.calibration(calibrations.status))
            }
        }
        if let recorder {
            r.blackBox = { (Int(RecordingFormat.version), recorder.ringFile()) }
            r.saveBlackBox = { reason in
                do { return .success(try recorder.save(reason: reason)) } catch { return .failure(SocketDoor.CalibrationRefused(["\(error)"])) }
            }
        }
        if imuReader != nil, calibrations != nil {
            r.swing = { [weak self] action in
                guard let self else { return .failure(SocketDoor.CalibrationRefused(["stopping"])) }
                return self.swing(action)
            }
        }
        // On the pipeline queue, where the router calls them: the compass stage is touched there only.
        if calibrations != nil {
            r.calibrationPoints = { [weak self] in self?.calibrationObject(detailed: true) ?? WireEncoding.error("CALIBRATION: stopping") }
            r.onlineCalibration = { [weak self] action in
                guard let self else { return .failure(SocketDoor.CalibrationRefused(["stopping"])) }
                return self.act(action)
            }
        }
        return r
    }

    /// A client's swing action (on the pipeline queue): the SWING object after it. `stop` solves what was
    /// collected and, when the solver takes it, writes the deviation file and reloads it (in force from then
    /// on, for every door); a swing it refuses leaves the curve in force unchanged and says why.
    private func swing(_ action: SwingAction) -> Result<String, SocketDoor.CalibrationRefused> {
        func refused(_ why: String) -> Result<String, SocketDoor.CalibrationRefused> { .failure(SocketDoor.CalibrationRefused([why])) }
        switch action {
        case .status:
            if let swing { return .success(WireEncoding.swing(state: "collecting", swing)) }
            return .success(lastSwing ?? WireEncoding.swing(state: "idle", nil))
        case .start:
            if let swing { return refused("a swing is collecting since \(swing.started.iso8601): stop or cancel it first") }
            swing = DaemonSwing(started: pipelineNow)
            // Every attitude and fix, unchained: what `bearing swing` asks the socket for.
            swingRuns = [
                hub.subscribe(StreamKey(.att, .compass), through: []) { [weak self] r in
                    if case .attitude(let a) = r.payload { self?.swing?.take(a) }
                },
                hub.subscribe(StreamKey(.tpv, .gpsd), through: []) { [weak self] r in
                    if case .fix(let f) = r.payload { self?.swing?.take(f) }
                },
            ]
            return .success(WireEncoding.swing(state: "collecting", swing))
        case .cancel:
            guard swing != nil else { return refused("no swing is collecting") }
            swing = nil
            swingRuns = []
            lastSwing = WireEncoding.swing(state: "idle", nil, error: "cancelled; the deviation curve in force is unchanged")
            return .success(lastSwing!)
        case .stop:
            guard let s = swing else { return refused("no swing is collecting: start one") }
            swing = nil
            swingRuns = []
            let result: SwingResult
            do throws(SwingError) {
                result = try s.collector.solve()
            } catch {
                lastSwing = WireEncoding.swing(state: "refused", s, error: "\(error.message); the deviation curve in force is unchanged")
                logger.notice("swing refused: \(error.message)")
                return .success(lastSwing!)
            }
            guard let calibrations, let store = calibrations.deviation else { return refused("no deviation file is configured") }
            let record = DeviationRecord(result: result, time: GPSTimestamp.now().iso8601)
            do { try AtomicFile.write(Array(record.encoded()), to: store.path) } catch {
                return refused("the deviation file \(store.path) could not be written: \(error); the curve in force is unchanged")
            }
            let rejected = calibrations.reload(reason: "swing")
            if !rejected.isEmpty { return refused("written, but not loaded: \(rejected.joined(separator: "; "))") }
            lastSwing = WireEncoding.swing(state: "applied", s, result: result, file: store.path)
            logger.notice("swing applied: deviation curve written", metadata: ["file": "\(store.path)"])
            return .success(lastSwing!)
        }
    }

    /// A client's action on online calibration (on the pipeline queue): the CALIBRATION object after it.
    private func act(_ action: OnlineCalibrationAction) -> Result<String, SocketDoor.CalibrationRefused> {
        guard config.autoCalibration != .off else {
            return .failure(SocketDoor.CalibrationRefused(["online calibration is off (calibration.auto: off)"]))
        }
        guard fusionStage != nil else {
            return .failure(SocketDoor.CalibrationRefused(["online calibration needs an IMU (imu:)"]))
        }
        let now = pipelineNow
        switch action {
        case .lock: fuse(.onlineMode(.locked, at: now))
        case .unlock: fuse(.onlineMode(.track, at: now))
        case .reset:
            fuse(.onlineReset(at: now))
            // What was learnt is forgotten for good: the kept file goes too, or the next start would bring it back.
            if case .live = feed, let store = calibrations?.online {
                let logger = self.logger
                onlineKeeper.async {
                    if unlink(store.path) != 0 && errno != ENOENT {
                        logger.error("online calibration reset, but its file stays: \(SystemError("unlink", store.path))")
                    }
                }
            }
        }
        onlineState = fusionStage?.fusion.onlineState(at: now)
        onlineModeInForce = fusionStage?.fusion.auto
        let line = calibrationObject(detailed: false)
        hub.publishCalibration(line)
        return .success(line)
    }

    /// The second half of `start()`: the black box's key records, then gpsd and the sensors (none in a
    /// replay: its `Replayer` sends the recording instead).
    public func startSources() {
        guard case .live = feed else { return }
        recordKeys()
        let api = GPSDClient.apiVersion
        logger.info("connecting to gpsd", metadata: ["gpsd": "\(config.gpsd.endpoint)", "libgps_api": "\(api.major).\(api.minor)"])
        gpsd.start()
        if let reader, let calibrations {
            calibrations.reload(reason: "start")
            let calibration = calibrations.magnetometer
            let m = config.magnetometer
            logger.info("reading magnetometer", metadata: [
                "bus": "\(m.reader.bus)", "chip": "\(m.reader.chip ?? "auto")",
                "address": "\(m.reader.address.map(I2CError.hex) ?? "auto")", "rate": "\(m.reader.settings.rate)",
                "orientation": "\(m.orientation)", "board": "\(config.board ?? "none")",
                "calibration": "\(calibration.current.map { "\($0.model.rawValue) fitted \($0.time)" } ?? "none")",
            ])
            reader.start()
            if let imuReader {
                let i = config.imu
                logger.info("reading accelerometer/gyroscope", metadata: [
                    "bus": "\(i.reader.bus)", "chip": "\(i.reader.chip ?? "auto")",
                    "address": "\(i.reader.address.map(I2CError.hex) ?? "auto")", "rate": "\(i.reader.settings.rate)",
                    "orientation": "\(i.orientation)",
                    "calibration": "\(calibrations.accelerometer?.current.map { "\($0.model.rawValue) fitted \($0.time)" } ?? "none")",
                    "level": "\(calibrations.level?.current.map { String(printf: "roll %.2f°, pitch %.2f°", $0.roll, $0.pitch) } ?? "none")",
                ])
                imuReader.start()
            }
        }
    }

    private func wire() {
        let q = core.entry
        let hub = self.hub
        hub.observer = { [weak self] className, line in self?.record(className, line) }

        subscriptions.append(gpsAdapter.fixes.subscribe(on: q) { [weak self] fix in
            self?.sourceHealth["gpsd", default: SourceHealth()].sample(at: Syscall.monotonicSeconds())
            hub.publish(Report(.fix(fix)), from: .gpsd)
        })
        subscriptions.append(gpsAdapter.skies.subscribe(on: q) { hub.publish(Report(.sky($0)), from: .gpsd) })
        subscriptions.append(gpsAdapter.relayed.subscribe(on: q) { hub.publish(Report(.relayed($0)), from: .gpsd) })
        subscriptions.append(gpsAdapter.states.subscribe(on: q) { [weak self] state in
            guard let self else { return }
            self.publishState(state, log: &self.gpsdLog, endpoint: self.config.gpsd.endpoint)
        })
        subscriptions.append(gpsAdapter.failures.subscribe(on: q) { [weak self] failure in
            self?.sourceHealth["gpsd", default: SourceHealth()].failures += 1
            self?.logger.warning("gpsd: \(failure.message)", metadata: ["gpsd": "\(failure.endpoint)"])
        })

        if reader != nil { wireCompass() }
    }

    private func wireCompass() {
        let q = core.entry
        let hub = self.hub
        if let calibrations {
            calibrations.onChange { [pipelineQueue, weak self] in
                let status = calibrations.status
                let agent = self
                let active = calibrations.activeMagnetometer
                let kept = calibrations.driving?.current
                pipelineQueue.async {
                    agent?.recordCalibrations()
                    agent?.onlineState = nil
                    agent?.calibrationsChanged(magnetometer: active, status: status, driving: kept)
                    if let agent { hub.publishCalibration(agent.calibrationObject(status)) }
                }
            }
        }
        // Raw samples for `bearing calibrate` and other clients that list MAG, formatted only then.
        subscriptions.append(magAdapter.samples.subscribe(on: q) { sample in
            if hub.hasWatchers("MAG") { hub.publishMAG(WireEncoding.mag(sample)) }
        })
        // With `chip: auto` the chip is known only now: a calibration fitted for another one is dropped.
        subscriptions.append(magAdapter.samples.subscribe(on: q) { [weak self] sample in
            guard let self, self.magnetometerChip == nil else { return }
            self.magnetometerChip = sample.chip
            self.calibration?.dropIfMismatched(chip: sample.chip, sensor: "magnetometer")
            // What was learnt in place on another sensor (the simulator's, the Pi's other compass) is set aside.
            let sensor = SensorIdentity(board: self.config.board, device: sample.device, chip: sample.chip)
            self.magnetometerSensor = sensor
            self.calibrations?.online?.setAsideIfLearntOnAnother(sensor)
            self.calibrations?.driving?.setAsideIfLearntOnAnother(sensor)
        })

        if imuReader != nil {
            wireFusion()
        } else {
            wireMagnetometerOnly()
        }

        wireReports(magAdapter, name: "magnetometer", log: \.magnetometerLog, lastFailure: \.lastMagFailure, saturated: \.overflow,
                    addressConfigured: reader?.configuration.address != nil) { [reader] in reader?.endpoint ?? "" }
    }

    /// The calibration files changed (on the pipeline queue): what they hold is in force in the compass stage from
    /// the next sample on, in this order.
    private func calibrationsChanged(magnetometer: ActiveCalibration?, status: CalibrationStatus, driving: DrivingDeviationRecord?) {
        magnetometerStage?.calibration = magnetometer
        guard fusionStage != nil else { return }
        fuse(.calibration(magnetometer))
        fuse(.accelerometerCalibration(status.accelerometer?.record?.active))
        fuse(.level(status.level?.record.flatMap { try? $0.level() }))
        fuse(.deviation(status.deviation?.record.flatMap { try? $0.curve() }))
        fuse(.drivingDeviation(driving))
    }

    /// One input into the fusion stage; the attitude it gives goes to the ATT chains. On the pipeline queue. A sensor's
    /// sample comes with `elapsed`, the time it entered the pipeline on the pipeline's monotonic clock (a replay's, the
    /// recorded one): with it the fusion tells a wall clock stepped forward from samples lost, and one stepped back by
    /// less than half a second from a sample handed over late (`SampleClock`).
    private func fuse(_ input: FusionInput, elapsed: Double? = nil) {
        if let attitude = fusionStage?.step(input, elapsed: elapsed) { hub.publish(Report(.attitude(attitude)), from: .compass) }
    }

    /// The samples' clock (the system's wall clock) stepped and the fusion took the step out: the journal says so, at
    /// most once a minute (`ClockStepJournal`).
    private func clockStepped(by step: Double) {
        if let line = clockStepJournal.line(forStep: step, at: clock.seconds) { logger.notice("\(line)") }
    }

    /// A sensor's STATE (published and logged) and failures: a sensor that keeps failing the same way is
    /// logged once loudly, then quietly.
    private func wireReports<Sample>(_ adapter: SensorSubjects<Sample>, name: String,
                                     log: ReferenceWritableKeyPath<Agent, SourceStateLog>,
                                     lastFailure: ReferenceWritableKeyPath<Agent, String?>,
                                     saturated: @escaping (Sample) -> Bool, addressConfigured: Bool,
                                     endpoint: @escaping () -> String) {
        let q = core.entry
        subscriptions.append(adapter.states.subscribe(on: q) { [weak self] state in
            guard let self else { return }
            if state == .connected { self[keyPath: lastFailure] = nil }
            // DEVICES lists a sensor at its configured address from the start, and with the address on auto once it is
            // found, at the address it answered at (its endpoint is the bus alone until then); a lost one stays listed.
            if state == .connected || addressConfigured { self.hub.setDevice(endpoint(), of: name) }
            self.publishState(state, log: &self[keyPath: log], endpoint: endpoint())
        })
        subscriptions.append(adapter.samples.subscribe(on: q) { [weak self] sample in
            guard let self else { return }
            let now = Syscall.monotonicSeconds()
            self.sourceHealth[name, default: SourceHealth()].sample(at: now)
            if saturated(sample), let line = self.sourceHealth[name, default: SourceHealth()].saturatedSample(at: now, source: name) {
                self.logger.warning("\(line)")
            }
        })
        subscriptions.append(adapter.failures.subscribe(on: q) { [weak self] failure in
            guard let self else { return }
            self.sourceHealth[name, default: SourceHealth()].failures += 1
            let text = failure.description
            if text == self[keyPath: lastFailure] { self.logger.debug("\(name): \(text)") } else { self.logger.warning("\(name): \(text)") }
            self[keyPath: lastFailure] = text
        })
    }

    /// The journal's line, once for `whose` clock, when a date the WMM field is taken at is outside WMM2025's validity: a
    /// warning when it is held at the validity's nearest end (`WorldMagneticModel.heldYear`: a clock that is wrong), a
    /// notice when it is extrapolated. While wiring, then on the pipeline queue.
    private func tellDate(_ time: GPSTimestamp, of whose: String) {
        let model = WorldMagneticModel.wmm2025, year = WorldMagneticModel.decimalYear(unixSeconds: time.unixTime)
        guard !model.validity.contains(year), toldDates.insert(whose).inserted else { return }
        let f = { (y: Double) in String(printf: "%.1f", y) }
        let said = "\(whose) says \(time.iso8601), outside \(model.name)'s validity (\(f(model.validity.lowerBound))–\(f(model.validity.upperBound)))"
        let held = model.heldYear(year)
        if held == year {
            logger.notice("\(said): the WMM field is extrapolated to it")
        } else {
            logger.warning("\(said), more than \(String(printf: "%.0f", WorldMagneticModel.plausible)) years from its epoch: the WMM field (declination, the field's "
                + "strength and dip) is taken at \(f(held)). A clock that is wrong? (a board without a real-time clock before it syncs, "
                + "a receiver whose week number rolled over)")
        }
    }

    /// What the journal says of a fix the WMM field is taken from: its date outside the model's validity (`tellDate`), a
    /// position jump (`jumpJournal`). On the pipeline queue.
    private func tellFix(_ fix: GPSFix, jump: PositionJumps.Event?) {
        if fix.mode >= .twoD, fix.latitude != nil, let time = fix.time { tellDate(time, of: "the GPS fix") }
        if let jump, let line = jumpJournal.line(for: jump, at: clock.seconds) { logger.notice("\(line)") }
    }

    /// The WMM field at the configured fallback position (`heading.fallback_position`) and the system clock's date,
    /// or nil without one; the journal is told of a date outside the model's validity (`tellDate`). While wiring.
    private func fallbackField() -> LocalField? {
        guard let position = config.heading.fallbackPosition else { return nil }
        tellDate(startTime, of: "the system clock")
        return LocalField.fallback(position, unixSeconds: startTime.unixTime)
    }

    /// The magnetometer alone (`MagnetometerStage`): calibration, orientation, heading for a level board,
    /// declination from the fix (`WMMStage`), or the fallback position's.
    private func wireMagnetometerOnly() {
        let q = core.entry
        let hub = self.hub
        var declination: WMMStage<Declination?>?
        if config.heading.trueNorth {
            declination = .declinations(model: .wmm2025, fallback: fallbackField()?.declination)
        }
        // No calibration is in force yet: the files are loaded when the sources start, after the wiring, and
        // come through `calibrationsChanged` on the pipeline queue, before the first sample.
        magnetometerStage = MagnetometerStage(orientation: config.magnetometer.orientation, declination: declination?.current)
        if var declination {
            subscriptions.append(gpsAdapter.fixes.subscribe(on: q) { [weak self] fix in
                guard let self else { return }
                let changed = declination.take(fix)
                self.tellFix(fix, jump: declination.jumpEvent)
                guard changed else { return }
                let d = declination.current
                if let d, d.source == .fix { self.logger.debug("declination \(String(printf: "%.2f", d.value))° from the GPS fix (WMM2025)") }
                self.magnetometerStage?.declination = d
            })
        }
        subscriptions.append(magAdapter.samples.subscribe(on: q) { [weak self] sample in
            guard let attitude = self?.magnetometerStage?.attitude(sample) else { return }
            hub.publish(Report(.attitude(attitude)), from: .compass)
        })
    }

    /// Magnetometer and accelerometer + gyroscope (`FusionStage`): both sensors' samples, the WMM field at the
    /// fix (or the fallback position) and the files in force enter one `AttitudeFusion` on the pipeline queue,
    /// which gives an attitude per inertial sample; the ATT chains (`pipeline.att`) throttle them.
    private func wireFusion() {
        let q = core.entry
        var field = WMMStage<LocalField?>.localFields(model: .wmm2025, fallback: fallbackField())
        var fusion = AttitudeFusion(imuOrientation: config.imu.orientation, magnetometerOrientation: config.magnetometer.orientation,
                                    trueNorth: config.heading.trueNorth, auto: config.autoCalibration, vehicle: config.vehicle)
        fusion.onOnlineEvent = { [weak self] change, state in self?.onlineEvent(change, state) }
        fusion.onDrivingDeviation = { [weak self] record in self?.keepDrivingDeviation(record) }
        fusion.onClockStep = { [weak self] step in self?.clockStepped(by: step) }
        fusionStage = FusionStage(fusion)
        // Nothing from the files is in force yet (see wireMagnetometerOnly); the field is the fallback's.
        fusionStage?.start(calibration: nil, localField: field.current)
        let learnsFromDriving = config.vehicle.learnsFromDriving
        subscriptions.append(gpsAdapter.fixes.subscribe(on: q) { [weak self] fix in
            // Neither input gives an attitude (only inertial samples do): nothing to publish.
            guard let self else { return }
            let changed = self.fusionStage?.take(fix, field: &field, learnsFromDriving: learnsFromDriving) == true
            self.tellFix(fix, jump: field.jumpEvent)
            guard changed, let f = field.current, f.declination.source == .fix else { return }
            self.logger.debug("declination \(String(printf: "%.2f", f.declination.value))°, field \(String(printf: "%.1f", f.reference.norm)) µT dipping \(String(printf: "%.1f", f.reference.dip))° at the GPS fix (WMM2025)")
        })
        subscriptions.append(magAdapter.samples.subscribe(on: q) { [weak self] sample in
            guard let self else { return }
            self.fuse(.magnetic(sample), elapsed: self.clock.seconds)
        })
        subscriptions.append(imuAdapter.samples.subscribe(on: q) { [weak self] sample in
            guard let self else { return }
            self.fuse(.inertial(sample), elapsed: self.clock.seconds)
        })
        // With `imu.chip: auto` the chip is known only now: an accelerometer calibration for another one is dropped.
        var imuChipSeen = false
        subscriptions.append(imuAdapter.samples.subscribe(on: q) { [weak self] sample in
            guard !imuChipSeen else { return }
            imuChipSeen = true
            self?.calibrations?.accelerometer?.dropIfMismatched(chip: sample.chip, sensor: "accelerometer")
        })

        wireReports(imuAdapter, name: "imu", log: \.imuLog, lastFailure: \.lastIMUFailure, saturated: \.saturated,
                    addressConfigured: imuReader?.configuration.address != nil) { [imuReader] in imuReader?.endpoint ?? "" }
    }

    /// The CALIBRATION object: the files in force and, with `calibration.auto`, the online calibration's state: the one
    /// an online event has just `told`, else as it stands now (`onlineStateNow`). On the pipeline queue.
    private func calibrationObject(_ files: CalibrationStatus, detailed: Bool = false, told: OnlineCalibrationState? = nil) -> String {
        var status = files
        // Not read from the fusion stage: this is called from inside its step (an online event, with `told`), where
        // the stage is being modified (an exclusive access).
        status.onlineMode = onlineModeInForce ?? config.autoCalibration
        if detailed, let fusion = fusionStage?.fusion {
            var d = CalibrationDetail()
            d.points = fusion.online?.heldPoints ?? []
            d.history = fusion.history
            d.curve = fusion.deviationInForce.map { ($0.source, $0.points.map { .init(compass: $0.compass, deviation: $0.deviation) }) }
            d.observations = (fusion.driving?.observations ?? []).joined().map { .init(compass: $0.compass, deviation: $0.deviation) }
            status.detail = d
        } else if detailed {
            status.detail = CalibrationDetail()
        }
        status.online = told ?? onlineStateNow
        status.onlineSource = calibrations?.activeMagnetometer?.origin ?? .none
        return WireEncoding.calibration(status)
    }

    /// The pipeline's time now: the wall clock's, or a replay's.
    private var pipelineNow: GPSTimestamp { clock.mode == .live ? wallClock() : core.clock.wallTime }

    /// The online calibration's state as last told (its calibration, when it changed), with the episode of interference
    /// as it stands now, on the fusion's clock: an episode goes on between the events that tell of it, and the state
    /// kept is the last event's (HEALTH said 0 s three seconds into one). With none told since the calibration was put
    /// in force, as it stands now: a kept calibration's field, offset and matrix were told only from its first change
    /// or episode (a board restarted at anchor, hours). On the pipeline queue, never from inside the fusion's step (an
    /// online event), where the stage is being modified.
    private var onlineStateNow: OnlineCalibrationState? {
        guard let now = fusionStage?.fusion.onlineState(at: pipelineNow) else { return onlineState }
        guard var state = onlineState else { return now }
        state.interference = now.interference
        state.ongoing = now.ongoing
        state.clockTime = now.clockTime
        state.clockShift = now.clockShift
        return state
    }

    /// The CALIBRATION object now, with the points and history when `detailed`. On the pipeline queue.
    private func calibrationObject(detailed: Bool) -> String {
        guard let calibrations else { return WireEncoding.error("CALIBRATION: no magnetometer is configured") }
        return calibrationObject(calibrations.status, detailed: detailed)
    }

    /// An online calibration event (on the pipeline queue): a change is logged once, kept in the auto file
    /// (live only: a replay changes no file), and the CALIBRATION object published again, as it is when the
    /// interference begins or ends.
    private func onlineEvent(_ change: CalibrationChange?, _ state: OnlineCalibrationState) {
        onlineState = state
        if let change, let calibrations {
            logger.notice("\(change.summary)", metadata: ["regions": "\(state.regions)", "steps": "\(state.steps)", "quality": "\(state.quality)"])
            if case .live = feed, let store = calibrations.online {
                let record = OnlineCalibrationRecord(state: state, chip: magnetometerChip, sensor: magnetometerSensor, baseline: calibrations.magnetometer.current?.time,
                                                     time: state.time.iso8601)
                let logger = self.logger
                onlineKeeper.async {
                    do { try AtomicFile.write(Array(record.encoded()), to: store.path) } catch {
                        logger.error("online calibration not kept: \(error); it stays in force until the daemon stops")
                    }
                }
            }
        } else if let episode = state.episode, let line = interferenceJournal.line(for: episode) {
            logger.info("\(line)", metadata: ["quality": "\(state.quality)"])
        }
        if let calibrations { hub.publishCalibration(calibrationObject(calibrations.status, told: state)) }
    }

    /// The deviation learnt from driving to keep (on the pipeline queue): written atomically off it, live only.
    private func keepDrivingDeviation(_ record: DrivingDeviationRecord) {
        guard case .live = feed, let store = calibrations?.driving else { return }
        var stamped = record
        stamped.sensor = magnetometerSensor
        let record = stamped, logger = self.logger
        onlineKeeper.async {
            do {
                try AtomicFile.write(Array(record.encoded()), to: store.path)
                logger.info("deviation from driving kept", metadata: ["file": "\(store.path)"].merging(record.logMetadata) { $1 })
            } catch {
                logger.error("deviation from driving not kept: \(error); it stays in force until the daemon stops")
            }
        }
    }

    /// The data log and the journal's trace level see every object of the default chains and every state.
    private func record(_ className: String, _ line: String) {
        dataLog?.append(line)
        logger.trace("\(line)")
    }

    /// Publishes a source's STATE (kept for replay) and logs the change. On the pipeline queue.
    private func publishState(_ state: ConnectionState, log: inout SourceStateLog, endpoint: String) {
        let (s, isTransition) = log.transitions.next(state, source: log.source, endpoint: endpoint, time: clock.wallTime)
        if case .disconnected(let reason, _) = state, reason != .stopped, isTransition, log.wasConnected {
            recorder?.saveOnFault("\(log.source)-lost")
        }
        if state == .connected { log.wasConnected = true } else if case .disconnected = state { log.wasConnected = false }
        hub.publishState(source: log.source, line: WireEncoding.state(s), isTransition: isTransition)
        log.record(state, logger: logger, metadata: [log.source: "\(endpoint)"])
    }

    /// Reopens the data log (after rotation).
    public func reopenLogs() { dataLog?.reopen() }

    /// Reloads the calibration files; returns what was rejected, if anything (what was in force stays).
    @discardableResult
    public func reloadCalibration(reason: String) -> String? {
        let rejected = calibrations?.reload(reason: reason) ?? []
        return rejected.isEmpty ? nil : rejected.joined(separator: "; ")
    }

    /// Stops in order: the sources, then the pipeline queue drains (time-based operators are cancelled),
    /// then the data log flushes.
    public func stop() {
        stopSources()
        closeDataLog()
    }

    /// The parts `stop()` stops, in its order, for a service group that shuts them down one by one.
    public enum Part: String, CaseIterable, Sendable {
        /// The data log: flushed and closed last.
        case dataLog = "data log"
        /// gpsd and the magnetometer: stopped first, then the pipeline queue drains.
        case sources = "sources"
    }

    public func stop(_ part: Part) {
        switch part {
        case .sources: stopSources()
        case .dataLog: closeDataLog()
        }
    }

    private func stopSources() {
        imuReader?.stop()
        reader?.stop()
        gpsd.stop()
        frameTimer?.cancel()
        pipelineQueue.sync {
            subscriptions.removeAll()
        }
        recorder?.flush()
        // The online calibration's latest change is on disk before the daemon exits.
        onlineKeeper.sync {}
    }

    /// The key records a recording starts from: versions, the config, the calibrations. On start.
    private func recordKeys() {
        guard let recorder else { return }
        let api = GPSDClient.apiVersion
        let u = Syscall.systemName() ?? ("", "", "")
        let environment: [BearingRecording.Record.Pair] = [
            .init("bearing", Release.version), .init("kernel", "\(u.sysname) \(u.release) \(u.machine)"),
            .init("libgps_api", "\(api.major).\(api.minor)"), .init("started", "\(startTime.seconds).\(String(printf: "%09d", Int(startTime.nanoseconds)))"),
        ] + (origin?.pairs ?? [])
        input.enter({ .environment(environment) }) {}
        input.enter({ .config(ConfigRedaction.redact(origin?.yaml ?? "")) }) {}
        if config.blackbox.continuous {
            let timer = DispatchSource.makeTimerSource(queue: pipelineQueue)
            timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
            timer.setEventHandler { recorder.closeFrame(ifOlderThan: PipelineClock.monotonicMicroseconds()) }
            timer.resume()
            frameTimer = timer
        }
    }

    /// Records the calibration files' contents as the daemon has them now (on the pipeline queue, where a
    /// load's values reach the stages: a replay reloads at the same point).
    private func recordCalibrations() {
        guard case .live = feed, let recorder, let calibrations else { return }
        let files: [(String, String?)] = [("magnetometer", calibrations.magnetometer.path),
                                          ("accelerometer", calibrations.accelerometer?.path), ("level", calibrations.level?.path),
                                          ("online", calibrations.online?.path), ("deviation", calibrations.deviation?.path),
                                          ("driving", calibrations.driving?.path)]
        let t = clock.stamp()
        for (name, path) in files {
            let content = path.flatMap { try? AtomicFile.readText($0) }
            recorder.append(RecordedEvent(time: t, .calibration(name: name, content: content)))
        }
    }

    private func closeDataLog() {
        dataLog?.close()
        if started { logger.info("stopped") }
        started = false
    }

    /// The socket path in use.
    public var socketPath: String { config.socket.path }

    /// Counts probes the pipeline queue has run (see `probePipeline`); guarded by `probeLock`.
    private var pipelineProbes: UInt64 = 0
    private let probeLock = ConditionLock()

    /// Posts a probe to the pipeline queue: `liveness` counts it once the queue has run it.
    public func probePipeline() {
        pipelineQueue.async { [self] in probeLock.withLock { pipelineProbes &+= 1 } }
    }

    /// What each part shows of its progress, for the watchdog: the pipeline queue's probes, and whether a source thread has been inside one
    /// read for long.
    public var liveness: [Liveness.Evidence] {
        var out: [Liveness.Evidence] = [
            .progress("pipeline queue", probeLock.withLock { pipelineProbes }),
            .call("gpsd client", since: gpsd.inCallSince),
        ]
        if let reader { out.append(.call("magnetometer reader", since: reader.inCallSince)) }
        if let imuReader { out.append(.call("imu reader", since: imuReader.inCallSince)) }
        return out
    }

    #if DEBUG || BEARING_FAULT_INJECTION
    /// Fault injection for the watchdog tests (debug builds and `scripts/package --fault-injection` only): blocks the pipeline queue for good.
    public func wedgePipelineForTesting() {
        pipelineQueue.async { while true { sleep(3600) } }
    }
    #endif

    /// The sources' part of HEALTH (on the pipeline queue): each one's state, endpoint, measured rate and failures,
    /// and the black box's ring. The doors add theirs (`Daemon`).
    func healthSources() -> (sources: JSONValue, blackBox: JSONValue?) {
        let now = Syscall.monotonicSeconds()
        var list: [(String, ConnectionState, String, missed: Int?)] = [("gpsd", gpsAdapter.currentState, config.gpsd.endpoint, nil)]
        if let reader { list.append(("magnetometer", magAdapter.currentState, reader.endpoint, reader.missedReads)) }
        if let imuReader { list.append(("imu", imuAdapter.currentState, imuReader.endpoint, imuReader.missedReads)) }
        let sources = JSONValue.list(list.map { name, state, endpoint, missed in
            let h = sourceHealth[name] ?? SourceHealth()
            var o: [(String, JSONValue)] = [("source", .string(name)), ("endpoint", .string(endpoint)), ("state", .string(state.name))]
            if case .disconnected(let reason, _) = state { o.append(("reason", .string(reason.description))) }
            o.append(("rate", .number((h.rate(at: now) * 10).rounded() / 10)))
            o.append(("failures", .number(Double(h.failures))))
            if name != "gpsd" { o.append(("saturated", .number(Double(h.saturated)))) }
            if let missed { o.append(("missed", .number(Double(missed)))) }
            if name == "magnetometer" {
                // The episode of interference going on, and how long the heading has ridden on the gyroscope.
                if let state = onlineStateNow, let e = state.ongoing, let seconds = state.interferenceSeconds {
                    o.append(("interference", .map([("cause", .string(e.cause.rawValue)),
                                                    ("seconds", .number((seconds * 10).rounded() / 10)),
                                                    ("norm", .number((e.largestNorm * 10).rounded() / 10)), ("dip", .number((e.largestDip * 10).rounded() / 10))])))
                }
                if let held = fusionStage?.fusion.filter.heldOnGyroscope, held > 0 { o.append(("held", .number((held * 10).rounded() / 10))) }
            }
            return .map(o)
        })
        let blackBox = recorder.map { r -> JSONValue in
            let size = r.ringSize
            return .map([("minutes", .number(r.config.minutes)), ("bytes", .number(Double(size.bytes))), ("frames", .number(Double(size.frames)))])
        }
        return (sources, blackBox)
    }

    /// One line for `systemctl status`: each source's state and how many readers (`readers`, the socket door's)
    /// are connected.
    public func statusLine(readers n: Int) -> String {
        var parts = ["gpsd \(gpsAdapter.currentState.name)"]
        if reader != nil { parts.append("magnetometer \(magAdapter.currentState.name)") }
        if imuReader != nil { parts.append("imu \(imuAdapter.currentState.name)") }
        parts.append("\(n) reader\(n == 1 ? "" : "s")")
        return parts.joined(separator: ", ")
    }
}

/// How one source's state changes are logged: a retry loop against an absent source logs its first
/// failure loudly and the repeats quietly.
struct SourceStateLog {
    let source: String
    /// Which changes reach readers.
    var transitions = SourceStateTransitions()
    let connecting: String, lost: String, stillLost: String, stopped: String
    private var lastDisconnectCode: String?
    /// The source was connected until this change (a loss saves the black box).
    var wasConnected = false

    init(source: String, connecting: String, lost: String, stillLost: String, stopped: String) {
        self.source = source
        self.connecting = connecting
        self.lost = lost
        self.stillLost = stillLost
        self.stopped = stopped
    }

    mutating func record(_ state: ConnectionState, logger: Logger, metadata: Logger.Metadata) {
        switch state {
        case .connected:
            logger.notice("\(source) connected", metadata: metadata)
            lastDisconnectCode = nil
        case .disconnected(let reason, _):
            if reason == .stopped {
                logger.info("\(stopped)", metadata: metadata)
            } else if reason.code == lastDisconnectCode {
                logger.debug("\(stillLost): \(reason)", metadata: metadata)
            } else {
                logger.warning("\(lost): \(reason)", metadata: metadata)
            }
            lastDisconnectCode = reason.code
        case .connecting(let attempt):
            logger.debug("\(connecting) (attempt \(attempt))", metadata: metadata)
        }
    }
}

/// One source's samples per second, over the last nine whole seconds, and its failures since the start: ten
/// one-second buckets, so a sample costs a few instructions.
struct SourceHealth {
    private var buckets = Array(repeating: (second: -1, count: 0), count: 10)
    var failures = 0
    /// Samples with an axis at the end of its range since the start, and when the journal last said so.
    private(set) var saturated = 0
    private var saturationLines = LogThrottle(interval: 60)

    /// One saturated sample at `now` (monotonic seconds) from `source`: the journal's line when one is due (the
    /// first at once, then at most one a minute, counting those between).
    mutating func saturatedSample(at now: Double, source: String) -> String? {
        saturated += 1
        guard let untold = saturationLines.admit(at: now) else { return nil }
        let since = untold + 1
        let what = source == "magnetometer" ? "a field beyond its range: a magnet or a motor too close?" : "a motion beyond its range: a knock, or the range set too small?"
        return "\(source): an axis at the end of its range (saturated), \(since) sample\(since == 1 ? "" : "s") since the last line: "
            + "\(what) What it reads then is not used; \(saturated) since the start"
    }

    mutating func sample(at now: Double) {
        let second = Int(now), i = second % 10
        if buckets[i].second != second { buckets[i] = (second, 0) }
        buckets[i].count += 1
    }

    func rate(at now: Double) -> Double {
        let second = Int(now)
        let n = buckets.reduce(0) { $0 + ($1.second < second && $1.second >= second - 9 ? $1.count : 0) }
        return Double(n) / 9
    }
}
