// What a client reads and sends is BearingWire's (requests, messages, operator specs) and BearingModel's
// (fixes, attitudes): one `import BearingClient` brings them.
@_exported import BearingModel
@_exported import BearingWire
