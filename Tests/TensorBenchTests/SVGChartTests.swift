import Foundation
import Testing
@testable import TensorBenchCore

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Collects what the tests check in an SVG document.
final class SVGCollector: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var texts: [String] = []
    var rootName: String?
    var rootAttributes: [String: String] = [:]
    private var inText = false

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        if rootName == nil {
            rootName = name
            rootAttributes = attributes
        }
        elements[name, default: 0] += 1
        if name == "text" {
            inText = true
            texts.append("")
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if inText, !texts.isEmpty { texts[texts.count - 1] += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" { inText = false }
    }
}

@Suite struct SVGChartTests {
    func parse(_ svg: String) throws -> SVGCollector {
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = SVGCollector()
        parser.delegate = collector
        let ok = parser.parse()
        #expect(ok, "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")")
        return collector
    }

    @Test func isWellFormedWithABarPerRowAndMarkedReferences() throws {
        var reference = try Fixtures.row("gemm-256", "reference", kind: .reference, min: 1e-4, median: 1.1e-4, p90: 1.2e-4)
        reference.detail = "cblas_sgemm"
        let rows = [
            reference,
            try Fixtures.row("gemm-256", "openblas", min: 1e-4, median: 1.3e-4, p90: 2e-4),
            try Fixtures.row("gemm-256", "naive", min: 0.1, median: 0.12, p90: 0.2),
            try Fixtures.row("softmax <&> \"vocab\"", "auto", min: 1e-6, median: 2e-6, p90: 3e-6),
        ]
        let svg = SVGChart(rows: rows, title: "A & B <chart>").rendered()
        let document = try parse(svg)
        #expect(document.rootName == "svg")
        #expect(document.rootAttributes["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(document.rootAttributes["viewBox"] != nil)
        // Background, legend swatches (4 backends), one bar per row, the hatch pattern's rect.
        #expect(document.elements["rect", default: 0] == 1 + 4 + rows.count + 1)
        #expect(document.elements["pattern"] == 1)
        #expect(document.texts.contains("A & B <chart>"))
        #expect(document.texts.contains("softmax <&> \"vocab\""))
        #expect(document.texts.contains("cblas_sgemm (ref)"))
        // Log axis: one gridline per decade from 1 µs to 1 s.
        #expect(document.elements["line", default: 0] >= 7)
        #expect(document.texts.contains("1.0 µs") && document.texts.contains("1.00 s"))
    }

    @Test func emptyAndDegenerateInputsStillGiveAValidDocument() throws {
        let empty = try parse(SVGChart(rows: [], title: "nothing").rendered())
        #expect(empty.rootName == "svg")
        let zero = try Fixtures.row("w", "auto", min: 0, median: 0, p90: 0)
        let single = try Fixtures.row("w", "openblas", min: 1e-3, median: 1e-3, p90: 1e-3)
        let document = try parse(SVGChart(rows: [zero, single], title: "one").rendered())
        #expect(document.texts.contains("1.00 ms"))
    }

    @Test func escapesXMLSpecials() {
        #expect(SVGChart.escapeXML("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;")
    }
}
