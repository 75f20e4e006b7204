"""Every string of the user interface, in English and Chinese, in one place.

`translate(key, lang, **values)` looks a key up and fills in `{placeholders}`.
A key missing in either language is a bug (a test checks every key has both).
"""

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "中文"}
DEFAULT_LANGUAGE = "en"

STRINGS: dict[str, dict[str, str]] = {
    # App and navigation
    "app.title": {"en": "Attention Explorer", "zh": "注意力机制探索器"},
    "app.tagline": {
        "en": "Every matrix of scaled dot-product attention (“Attention Is All You Need”, §3.2.1), one step at a time.",
        "zh": "缩放点积注意力（《Attention Is All You Need》第 3.2.1 节）的每一个矩阵，一步一步看清楚。",
    },
    "page.step_through": {"en": "Step through", "zh": "逐步演示"},
    # Sidebar controls
    "sidebar.settings": {"en": "Settings", "zh": "设置"},
    "control.language": {"en": "Language / 语言", "zh": "语言 / Language"},
    "control.text": {"en": "Sentence (keys and values)", "zh": "句子（键和值）"},
    "control.text.help": {
        "en": "Words and punctuation become tokens; in Chinese and Japanese every character is a token.",
        "zh": "单词和标点各为一个词元；中文和日文每个字是一个词元。",
    },
    "control.example": {"en": "…or load an example", "zh": "……或载入示例"},
    "control.example.placeholder": {"en": "Choose an example sentence", "zh": "选择一个示例句子"},
    "control.dk": {"en": "dk: size of each query and key", "zh": "dk：每个查询和键向量的维度"},
    "control.dk.help": {
        "en": "The paper uses d_model = 512 split over 8 heads, so each head has dk = 512 / 8 = 64.",
        "zh": "论文中 d_model = 512，分成 8 个头，所以每个头的 dk = 512 / 8 = 64（并不是 512）。",
    },
    "control.d_model": {"en": "d_model: size of each embedding", "zh": "d_model：嵌入向量的维度"},
    "control.d_model.identity": {
        "en": "With Q = K = V = X the embeddings have dk columns, so d_model is not used.",
        "zh": "当 Q = K = V = X 时，嵌入向量有 dk 列，不使用 d_model。",
    },
    "control.mask": {"en": "Mask", "zh": "掩码"},
    "mask.none": {"en": "None", "zh": "无"},
    "mask.causal": {"en": "Causal (no looking ahead)", "zh": "因果（不能看后面的词）"},
    "mask.padding": {"en": "Padding", "zh": "填充（padding）"},
    "control.pad_positions": {"en": "Padding tokens (no one attends to them)", "zh": "填充词元（任何查询都不关注它们）"},
    "control.pad_positions.hint": {
        "en": "Pick the tokens that are padding: their columns will be masked.",
        "zh": "选择哪些词元是填充：它们所在的列会被遮蔽。",
    },
    "control.seed": {"en": "Random seed", "zh": "随机种子"},
    "control.seed.help": {
        "en": "Embeddings and projections are random but fixed by this seed and the word.",
        "zh": "嵌入和投影矩阵是随机的，但由这个种子和词本身唯一确定。",
    },
    "control.projection": {"en": "Where Q, K and V come from", "zh": "Q、K、V 从哪里来"},
    "projection.random": {"en": "Q = XW_Q, K = XW_K, V = XW_V (random W)", "zh": "Q = XW_Q，K = XW_K，V = XW_V（随机 W）"},
    "projection.identity": {"en": "Q = K = V = X (no projection)", "zh": "Q = K = V = X（不投影）"},
    "control.positional": {"en": "Add positional encoding (§3.5)", "zh": "加入位置编码（第 3.5 节）"},
    # Step-through page
    "step.view": {"en": "View", "zh": "视图"},
    "step.view.steps": {"en": "Step by step", "zh": "逐步"},
    "step.view.overview": {"en": "All stages at once", "zh": "全部阶段"},
    "step.stage": {"en": "Stage", "zh": "阶段"},
    "step.previous": {"en": "← Previous", "zh": "← 上一步"},
    "step.next": {"en": "Next →", "zh": "下一步 →"},
    "step.progress": {"en": "Step {number} of {total}", "zh": "第 {number} 步，共 {total} 步"},
    "step.shape": {"en": "Shape: {rows} × {columns}", "zh": "形状：{rows} × {columns}"},
    "tab.heatmap": {"en": "Heatmap", "zh": "热力图"},
    "tab.table": {"en": "Table", "zh": "表格"},
    "stage.embeddings.short": {"en": "1 · X", "zh": "1 · X"},
    "stage.qkv.short": {"en": "2 · Q, K, V", "zh": "2 · Q, K, V"},
    "stage.raw_scores.short": {"en": "3 · QKᵀ", "zh": "3 · QKᵀ"},
    "stage.scaled_scores.short": {"en": "4 · ÷√dk", "zh": "4 · ÷√dk"},
    "stage.masked_scores.short": {"en": "5 · mask", "zh": "5 · 掩码"},
    "stage.weights.short": {"en": "6 · softmax", "zh": "6 · softmax"},
    "stage.output.short": {"en": "7 · AV", "zh": "7 · AV"},
    "stage.embeddings.title": {"en": "Tokens and embeddings X", "zh": "词元与嵌入 X"},
    "stage.embeddings.explain": {
        "en": (
            "Each token becomes a row of numbers, its embedding: row i is token i ({n} tokens, {d_model} numbers each). "
            "Think of each column as a feature; for “cat” it might be *can run*, *climbs trees*, *animal*, "
            "*four legs*… Here the numbers are random but fixed per word, so the same word has the same row "
            "in every sentence."
        ),
        "zh": (
            "每个词元变成一行数字，即它的嵌入向量：第 i 行就是第 i 个词元（共 {n} 个词元，每个 {d_model} 个数）。"
            "可以把每一列看成一个特征；比如“猫”：*会跑*、*会爬树*、*是动物*、*有四条腿*……"
            "这里的数字是随机的，但对每个词固定，所以同一个词在任何句子里都是同一行。"
        ),
    },
    "stage.qkv.title": {"en": "Queries Q, keys K, values V", "zh": "查询 Q、键 K、值 V"},
    "stage.qkv.explain": {
        "en": (
            "Each embedding is projected three ways: a **query** (what this token is looking for), a **key** "
            "(what it can be found by) and a **value** (what it hands over when attended to). Q is n × dk = "
            "{n} × {dk}: one row per token. Raising dk adds a column to Q, K and V and leaves the others as they are."
        ),
        "zh": (
            "每个嵌入向量被投影成三份：**查询**（这个词在找什么）、**键**（它凭什么被找到）和**值**（被关注时交出的内容）。"
            "Q 是 n × dk = {n} × {dk}：每个词元一行。把 dk 调大，会给 Q、K、V 各加一列，其余各列不变。"
        ),
    },
    "stage.qkv.identity": {
        "en": "No projection is used: Q, K and V are all the embeddings X themselves.",
        "zh": "没有使用投影：Q、K、V 都等于嵌入 X 本身。",
    },
    "stage.raw_scores.title": {"en": "Raw scores QKᵀ", "zh": "原始分数 QKᵀ"},
    "stage.raw_scores.explain": {
        "en": (
            "Cell (i, j) is the dot product of query i and key j, **how similar query token i is to key token j**: "
            "multiply them feature by feature and add up. Q is {n} × {dk} and Kᵀ is {dk} × {m}, so QKᵀ is {n} × {m}: "
            "one row per query, one column per key. Red is similar, blue is opposite."
        ),
        "zh": (
            "第 (i, j) 格是查询 i 与键 j 的点积，也就是**查询词元 i 与键词元 j 有多相似**：逐个特征相乘再相加。"
            "Q 是 {n} × {dk}，Kᵀ 是 {dk} × {m}，所以 QKᵀ 是 {n} × {m}：每个查询一行，每个键一列。红色表示相似，蓝色表示相反。"
        ),
    },
    "stage.scaled_scores.title": {"en": "Scaled scores QKᵀ/√dk", "zh": "缩放后的分数 QKᵀ/√dk"},
    "stage.scaled_scores.explain": {
        "en": (
            "Every score is multiplied by {scale:.4g} (= 1/√{dk}). A dot product adds up dk products, so with "
            "random unit-size features it typically grows like √dk; without this division, large dk would give "
            "huge scores and softmax would put almost all weight on one key, with tiny gradients. "
            "Dividing by √dk keeps the scores around 1 whatever dk is."
        ),
        "zh": (
            "每个分数都乘以 {scale:.4g}（= 1/√{dk}）。点积是 dk 个乘积之和，若特征是随机的单位大小，它通常按 √dk 增长；"
            "不除的话，dk 很大时分数会非常大，softmax 几乎把全部权重给一个键，梯度也变得极小。"
            "除以 √dk 后，无论 dk 多大，分数都保持在 1 左右。"
        ),
    },
    "stage.scaled_scores.custom_scale": {
        "en": "Here the raw scores are multiplied by {scale:.4g} instead of 1/√dk.",
        "zh": "这里原始分数乘以的是 {scale:.4g}，而不是 1/√dk。",
    },
    "stage.masked_scores.title": {"en": "Masked scores", "zh": "加掩码后的分数"},
    "stage.masked_scores.explain": {
        "en": (
            "Where the mask forbids a query to look at a key (grey ×), the score becomes −∞, so after softmax "
            "its weight is exactly 0. Blue cells of M may attend; grey cells may not."
        ),
        "zh": "凡是掩码不允许查询看某个键的位置（灰色 ×），分数被设为 −∞，经过 softmax 后权重恰好为 0。M 中蓝色格子可以关注，灰色不可以。",
    },
    "stage.masked_scores.none": {
        "en": "No mask is set: every query may look at every key, so the scores are unchanged.",
        "zh": "没有设置掩码：每个查询都可以看所有键，分数保持不变。",
    },
    "stage.weights.title": {"en": "Softmax weights A", "zh": "Softmax 权重 A"},
    "stage.weights.explain": {
        "en": (
            "Softmax turns each row of scores into weights: exponentiate every score (after subtracting the "
            "row's largest, for numerical safety), then divide by the row's sum. Every weight is between 0 "
            "and 1 and **each row sums to 1**: row i says how query token i shares out its attention over the keys."
        ),
        "zh": (
            "Softmax 把每一行分数变成权重：对每个分数取指数（先减去该行最大值，以保证数值稳定），再除以该行之和。"
            "每个权重都在 0 到 1 之间，且**每一行加起来等于 1**：第 i 行表示查询词元 i 如何把注意力分配给各个键。"
        ),
    },
    "stage.output.title": {"en": "Output AV", "zh": "输出 AV"},
    "stage.output.explain": {
        "en": (
            "Output row i = Σⱼ Aᵢⱼ · vⱼ: **a weighted mix of the rows of V**, with row i of the weights as the "
            "mixing amounts. It pulls out and blends the features of the values that query i cares about. "
            "The output is {n} × {dv}, one row per query."
        ),
        "zh": (
            "输出第 i 行 = Σⱼ Aᵢⱼ · vⱼ：**V 各行的加权混合**，混合比例就是权重的第 i 行。"
            "它提取并融合了查询 i 所关心的那些值的特征。输出是 {n} × {dv}，每个查询一行。"
        ),
    },
    "warning.fully_masked": {
        "en": (
            "Every key is masked for {rows}. Softmax of a row of −∞ would be 0/0 = NaN; like PyTorch, the engine "
            "gives such a row weights 0 and output 0 instead."
        ),
        "zh": "{rows} 的所有键都被遮蔽了。对全是 −∞ 的一行做 softmax 会得到 0/0 = NaN；与 PyTorch 一样，本引擎把这样的行的权重和输出都设为 0。",
    },
    # Figures
    "figure.query": {"en": "query token", "zh": "查询词元"},
    "figure.key": {"en": "key token", "zh": "键词元"},
    "figure.feature": {"en": "feature", "zh": "特征"},
    "figure.value": {"en": "value", "zh": "数值"},
    "figure.masked": {"en": "masked", "zh": "已遮蔽"},
    "figure.allowed": {"en": "may attend", "zh": "可以关注"},
    # Errors and notices
    "error.empty_keys": {
        "en": "The sentence is empty. Type a few words, or load an example.",
        "zh": "句子是空的。请输入几个词，或载入一个示例。",
    },
    "error.empty_queries": {
        "en": "The query sentence is empty. Type a few words, or clear it for self-attention.",
        "zh": "查询句子是空的。请输入几个词，或清空它以使用自注意力。",
    },
    "error.single_token": {
        "en": (
            "Self-attention needs at least two tokens: with a single token its one weight is always 1. "
            "Add another word."
        ),
        "zh": "自注意力至少需要两个词元：只有一个词元时，唯一的权重永远是 1。请再加一个词。",
    },
    "error.dimension": {"en": "dk and d_model must be between 1 and {limit}.", "zh": "dk 和 d_model 必须在 1 到 {limit} 之间。"},
    "error.custom_mask_shape": {
        "en": "The custom mask has shape {shape} but the scores are {expected}; it was reset.",
        "zh": "自定义掩码的形状是 {shape}，而分数矩阵是 {expected}；已重置。",
    },
    "notice.truncated": {
        "en": "This page shows at most {limit} tokens: the first {limit} were kept and {dropped} dropped.",
        "zh": "本页最多显示 {limit} 个词元：保留了前 {limit} 个，舍弃了 {dropped} 个。",
    },
}


def translate(key: str, lang: str, **values) -> str:
    """The string `key` in `lang` ("en" or "zh"), with `{placeholders}` filled from `values`.

    Falls back to English for an unknown language, and to the key itself for an
    unknown key, so that a missing string shows up visibly instead of crashing a page.
    """
    entry = STRINGS.get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry[DEFAULT_LANGUAGE]
    return text.format(**values) if values else text
