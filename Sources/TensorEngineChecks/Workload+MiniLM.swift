import TensorEngine
import Foundation

/// An end-to-end sentence-embedding workload: fixed sentences embedded with all-MiniLM-L6-v2
/// through ``SentenceEmbedder``, strings in and normalized embeddings out.
package struct EmbeddingWorkload: Sendable {
    /// The model folder is absent: the workload cannot run on this machine.
    package struct ModelMissing: Error, CustomStringConvertible {
        /// The folder looked in.
        package let folder: URL

        package var description: String {
            "all-MiniLM-L6-v2 not found in \(folder.path); run scripts/fetch-model.sh (or set TENSORENGINE_MODEL_DIR)"
        }
    }

    /// The sentences embedded per run, in one call.
    package let sentences: [String]

    /// The model folder: `$TENSORENGINE_MODEL_DIR`, else
    /// `~/.cache/tensorengine/models/all-MiniLM-L6-v2` (where `scripts/fetch-model.sh` puts it).
    package static var modelFolder: URL { SentenceEmbedder.defaultFolder }

    /// Loads the embedder (memory-mapped weights), batching up to 32 sentences as
    /// sentence-transformers' `encode` does by default.
    ///
    /// - Throws: ``ModelMissing`` when the folder lacks the model's files, else the loading error.
    package func loadEmbedder() throws -> SentenceEmbedder {
        let folder = Self.modelFolder
        for file in ["config.json", "model.safetensors", "vocab.txt"]
        where !FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path) {
            throw ModelMissing(folder: folder)
        }
        return try SentenceEmbedder(folder: folder, batchSize: 32)
    }
}

extension Workload {
    /// The sentences of the `minilm-*` workloads.
    ///
    /// `bench/peers.py` (`MINILM_SENTENCES`) embeds the same sentences with sentence-transformers:
    /// change both together.
    enum MiniLMSentences {
        /// Batch 1: one sentence of 12 tokens ([CLS] and [SEP] included).
        case single
        /// Batch 32: 32 sentences of 18–22 tokens each (20 on average).
        case batch

        var sentences: [String] {
            switch self {
            case .single: ["A man is playing a guitar on the stage."]
            case .batch: Self.batchSentences
            }
        }

        static let batchSentences = [
            "The committee will meet again next Tuesday morning to discuss the budget for the coming year.",
            "A young woman is riding her red bicycle along the river on a warm and sunny afternoon.",
            "Researchers found that regular exercise improves both memory and mood in older adults over time.",
            "The train to the airport was delayed by forty minutes this morning because of a signal failure.",
            "He spent the whole long weekend repairing the old wooden fence behind his house in the village.",
            "Our new coffee machine in the office makes a surprisingly good espresso in under a minute.",
            "The children built a large sandcastle near the water and decorated it with shells from the beach.",
            "Heavy rain and strong winds are expected across the northern region for the rest of the week.",
            "She finally finished writing her first novel last month after working on it for six long years.",
            "The city museum is opening a new exhibition of modern sculpture and painting from South America.",
            "Please remember to turn off all the lights and lock the front door when you leave tonight.",
            "The software update fixes several serious bugs and makes the application start much faster than before.",
            "A large group of tourists is taking photographs in front of the old cathedral in the main square.",
            "The chef prepared a delicious soup with fresh tomatoes, garlic, onions and a few basil leaves.",
            "Scientists have recently discovered a new species of small green frog in the mountains of Peru.",
            "The football match was cancelled at the last minute because heavy rain had flooded the pitch.",
            "My grandmother still writes long letters by hand and sends them to the whole family every month.",
            "The company reported much higher profits this quarter thanks to strong sales of its phones in Asia.",
            "A small brown dog is happily chasing a red ball across the wet grass in the city park.",
            "The university library extended its opening hours so that students can study late in the evening.",
            "Two strong men are carefully carrying a heavy sofa up the narrow stairs of the old building.",
            "The pilot announced that the plane from Madrid would land about twenty minutes earlier than planned.",
            "Learning a second language is much easier when you practise speaking it with friends every day.",
            "The farmers are worried that the long, hot and dry summer will ruin this year's harvest.",
            "He ordered a large pizza with mushrooms, olives, peppers and extra cheese for dinner last night.",
            "The city council plans to plant ten thousand new trees along its busiest streets next year.",
            "A woman is slicing fresh vegetables on a wooden board in a bright and tidy kitchen.",
            "The concert hall was completely full for the orchestra's final performance of the winter season.",
            "Doctors recommend drinking plenty of cold water, especially during long walks on hot summer days.",
            "The old stone bridge across the valley will be closed for repairs until the end of next spring.",
            "Our friendly neighbours adopted a small grey kitten from the local animal shelter last weekend.",
            "The students presented their science project on renewable energy to the whole school on Friday.",
        ]
    }

    /// Sentence embedding with all-MiniLM-L6-v2, end to end (tokenizing and pooling included).
    static func miniLM(_ sentences: MiniLMSentences, quick: Bool) -> Workload {
        let texts = sentences.sentences
        // The encoder's FLOPs per token: 6 layers of four 384×384 and two 384×1536 products
        // (attention's own products and the element-wise ops are small beside them).
        let tokensPerSentence = switch sentences {
        case .single: 12
        case .batch: 20
        }
        let tokens = texts.count * tokensPerSentence
        let layerParameters = 4 * 384 * 384 + 2 * 384 * 1536
        let flops = 2.0 * Double(tokens) * 6 * Double(layerParameters)
        let name = "minilm-b\(texts.count)"
        return Workload(
            name: name, summary: "all-MiniLM-L6-v2 embeddings of \(texts.count) sentence\(texts.count == 1 ? "" : "s") of ~\(tokensPerSentence) tokens, strings in, normalized vectors out",
            quick: quick, reference: .none, essentialBytes: 6 * layerParameters * 4, flops: flops,
            body: .sentenceEmbedding(EmbeddingWorkload(sentences: texts)))
    }
}
