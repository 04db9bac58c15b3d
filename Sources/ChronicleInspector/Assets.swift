#if Inspector
// The inspector's page: plain HTML, CSS and JavaScript, no framework, nothing from the network.
//
// The files are Page/index.html, Page/inspector.css and Page/inspector.js. Package.swift declares
// them `.embedInCode`: SwiftPM compiles each into this module as a byte array of
// `PackageResources`, named after its file. They are inside the binary rather than in a resource
// bundle, which `Bundle.module` must find beside the executable at run time: a `logtool` copied or
// installed elsewhere still serves its page.

/// The page's three files, as the server sends them.
enum Assets {
  /// Page/index.html: the page. The server adds the token to its script's and style's addresses.
  static let page = String(decoding: PackageResources.index_html, as: UTF8.self)
  /// Page/inspector.css: the page's style.
  static let style = String(decoding: PackageResources.inspector_css, as: UTF8.self)
  /// Page/inspector.js: the page's script.
  static let script = String(decoding: PackageResources.inspector_js, as: UTF8.self)
}
#endif  // Inspector
