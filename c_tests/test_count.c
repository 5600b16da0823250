/* Stateless token counting, display and the model registry. */
#include "harness.h"

static ctxwin_count count(const char *model, const char *text) {
    ctxwin_count c = {-1, false};
    CHECK_OK(ctxwin_count_text(model, strlen(model), text, strlen(text), &c));
    return c;
}

static void openai_models_are_exact(void) {
    /* OpenAI's cookbook: cl100k_base encodes "tiktoken is great!" as 6 tokens. */
    ctxwin_count c = count("gpt-4", "tiktoken is great!");
    CHECK(c.tokens == 6 && c.exact);
    c = count("cl100k_base", "tiktoken is great!");
    CHECK(c.tokens == 6 && c.exact);
    c = count("gpt-4o", "hello world");
    CHECK(c.tokens == 2 && c.exact);
}

static void names_are_matched_as_users_write_them(void) {
    const char *text = "The quick brown fox jumps over the lazy dog, 12345 times.\n\tfn main() {}";
    ctxwin_count base = count("gpt-4o", text);
    const char *spellings[] = {"GPT-4o", "openai/gpt-4o", "openrouter/openai/gpt-4o", "gpt-4o-2024-08-06",
                               "ft:gpt-4o-2024-08-06:acme::abc123", "o200k_base"};
    for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++) {
        ctxwin_count c = count(spellings[i], text);
        CHECK(c.tokens == base.tokens && c.exact);
    }
    /* A different encoding gives a different count for this text. */
    CHECK(count("gpt-3.5-turbo", text).exact);
}

static void other_models_are_estimates(void) {
    const char *text = "Refactor the parser so that it streams its input instead of reading it whole.";
    const char *models[] = {"claude-sonnet-4-5", "gemini-2.5-pro", "my-local-llama", ""};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        ctxwin_count c = count(models[i], text);
        /* A plausible estimate: between a token per 8 bytes and a token per byte. */
        CHECK(!c.exact && c.tokens * 8 >= (int32_t)strlen(text) && c.tokens <= (int32_t)strlen(text));
    }
    /* The same family counts alike whatever the spelling. */
    CHECK(count("claude-sonnet-4-5", text).tokens == count("anthropic/Claude-3-5-haiku", text).tokens);
    ctxwin_count empty = {-1, true};
    CHECK_OK(ctxwin_count_text(NULL, 0, NULL, 0, &empty));
    CHECK(empty.tokens == 0);
}

static void bad_arguments_return_a_status_and_leave_out_alone(void) {
    ctxwin_count c = {42, true};
    const char bad[] = {'o', 'k', (char)0xC3, (char)0x28};
    CHECK_STATUS(ctxwin_count_text("gpt-4o", 6, bad, sizeof bad, &c), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_count_text(bad, sizeof bad, "x", 1, &c), CTXWIN_STATUS_INVALID_UTF8);
    CHECK_STATUS(ctxwin_count_text("gpt-4o", 6, NULL, 5, &c), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_count_text(NULL, 3, "x", 1, &c), CTXWIN_STATUS_NULL_ARG);
    CHECK_STATUS(ctxwin_count_text("gpt-4o", 6, "x", 1, NULL), CTXWIN_STATUS_NULL_ARG);
    CHECK(c.tokens == 42 && c.exact);
}

static void text_is_not_nul_terminated(void) {
    const char text[] = "hello world and more";
    ctxwin_count part = {0, false}, whole = {0, false};
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, text, 11, &part));
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, "hello world", 11, &whole));
    CHECK(part.tokens == whole.tokens);
    /* Embedded NUL bytes are text like any other. */
    const char nul[] = {'a', '\0', 'b'};
    CHECK_OK(ctxwin_count_text("gpt-4o", 6, nul, sizeof nul, &part));
    CHECK(part.tokens >= 2);
}

static void format_count_prints_compact_forms(void) {
    struct { int32_t tokens; bool exact; const char *want; } cases[] = {
        {950, true, "950"}, {77000, true, "77k"}, {77000, false, "~77k"}, {1200000, true, "1.2M"},
        {1500, true, "1.5k"}, {0, false, "~0"}, {-5, true, "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        ctxwin_count c = {cases[i].tokens, cases[i].exact};
        size_t n = ctxwin_format_count(c, buf, sizeof buf);
        CHECK(strcmp(buf, cases[i].want) == 0);
        CHECK(n == strlen(cases[i].want));
    }
    /* snprintf semantics: length query, and truncation with a NUL. */
    ctxwin_count big = {1200000, false};
    CHECK(ctxwin_format_count(big, NULL, 0) == 5);
    char small[3] = {'x', 'x', 'x'};
    CHECK(ctxwin_format_count(big, small, sizeof small) == 5);
    CHECK(small[0] == '~' && small[1] == '1' && small[2] == '\0');
}

static void context_limits(void) {
    CHECK(ctxwin_model_context_limit("gpt-4o", 6) == 128000);
    CHECK(ctxwin_model_context_limit("openai/GPT-4o-mini", 18) == 128000);
    CHECK(ctxwin_model_context_limit("gpt-4.1", 7) == 1047576);
    CHECK(ctxwin_model_context_limit("claude-opus-4-1", 15) == 200000);
    CHECK(ctxwin_model_context_limit("gemini-2.5-flash", 16) == 1048576);
    CHECK(ctxwin_model_context_limit("no-such-model", 13) == 0);
    CHECK(ctxwin_model_context_limit(NULL, 4) == 0);
    CHECK(ctxwin_model_context_limit(NULL, 0) == 0);
}

static int known(const char *model) {
    return ctxwin_model_known(model, strlen(model));
}

static void misspelled_models_are_unknown(void) {
    CHECK(known("gpt-4o") && known("openai/GPT-4o-mini") && known("o200k_base"));
    CHECK(known("claude-sonnet-4-5") && known("models/gemini-2.5-pro") && known("llama-3.1-8b"));
    CHECK(!known("gpt4o") && !known("claud-sonnet-4") && !known("") && !known("my-local-model"));
    /* A family's prefix is not enough: Claude 4's models are claude-sonnet-4..., not claude-4-sonnet. */
    CHECK(!known("claude-4-sonnet") && !known("claude-sonnet") && known("claude-3-5-sonnet-20241022"));
    CHECK(ctxwin_model_context_limit("claude-4-sonnet", 15) == 0);
    /* An unknown model still counts, as an estimate without a context limit. */
    ctxwin_count c;
    CHECK_OK(ctxwin_count_text("gpt4o", 5, "hello world", 11, &c));
    CHECK(!c.exact && c.tokens > 0);
    CHECK(ctxwin_model_context_limit("gpt4o", 5) == 0);
    CHECK(!ctxwin_model_known(NULL, 3));
    CHECK(!ctxwin_model_known("gpt-4o\xff", 7));
    CHECK(strstr(thread_last_error(), "model is not valid UTF-8") != NULL);
    CHECK(!ctxwin_model_known(NULL, 0));
}

void suite_count(void) {
    harness_run("misspelled_models_are_unknown", misspelled_models_are_unknown);
    harness_run("openai_models_are_exact", openai_models_are_exact);
    harness_run("names_are_matched_as_users_write_them", names_are_matched_as_users_write_them);
    harness_run("other_models_are_estimates", other_models_are_estimates);
    harness_run("bad_arguments_return_a_status_and_leave_out_alone", bad_arguments_return_a_status_and_leave_out_alone);
    harness_run("text_is_not_nul_terminated", text_is_not_nul_terminated);
    harness_run("format_count_prints_compact_forms", format_count_prints_compact_forms);
    harness_run("context_limits", context_limits);
}
