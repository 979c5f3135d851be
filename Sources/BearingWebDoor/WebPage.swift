/// The page, built into the binary from `page/index.html` (SwiftPM's `embedInCode`): one file, its styles and
/// script inline, nothing loaded from elsewhere, so that it works offline at sea.
enum WebPage {
    static var html: [UInt8] { PackageResources.index_html }
}
