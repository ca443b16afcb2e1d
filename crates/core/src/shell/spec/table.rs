//! The tables: which options of each known tool are safe, and what its operands are. Options left out can
//! write files, run programs, follow symlinks out of the tree, or read a list of further files; they make the
//! command ask. `known` lists every long option of the GNU tool (from its `--help`), so a prefix resolves the
//! way the tool resolves it.

use super::{Operands, Spec};

const GREP_PATTERN_GIVERS: &[&str] = &["-e", "-f", "--regexp", "--file"];
const RG_PATTERN_GIVERS: &[&str] = &["-e", "-f", "--regexp", "--file", "--files", "--type-list"];

const fn tool(short: &'static str, long: &'static str, known: &'static str, operands: Operands) -> Spec {
    Spec { short, long, known, numeric: false, single_letters: false, operands }
}

/// The spec of a tool, by its bare name.
#[expect(
    clippy::too_many_lines,
    reason = "the table of read-only programs and their options: data, one entry per program"
)]
pub(super) fn spec(program: &str) -> Option<Spec> {
    let found = match program {
        "cat" => tool(
            "AbeEnstTuv",
            "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
            "",
            Operands::Read,
        ),
        "head" | "tail" => Spec {
            numeric: true,
            ..tool(
                "qvz n:t c:t f F s:t",
                "lines=t bytes=t quiet silent verbose zero-terminated follow[=t] retry sleep-interval=t pid=t \
                 max-unchanged-stats=t",
                "bytes lines quiet silent verbose zero-terminated follow retry sleep-interval pid max-unchanged-stats",
                Operands::Read,
            )
        },
        "wc" => tool(
            "cmlLw",
            "bytes chars lines max-line-length words total=t",
            "bytes chars lines max-line-length words files0-from total",
            Operands::Read,
        ),
        "grep" | "egrep" | "fgrep" => tool(
            "EFGPiywxvcLlmobnHhqsraIzZTU e:t f:r m:t A:t B:t C:t d:t D:t",
            "extended-regexp fixed-strings basic-regexp perl-regexp regexp=t file=r ignore-case no-ignore-case \
             word-regexp line-regexp null-data no-messages invert-match max-count=t byte-offset line-number \
             line-buffered with-filename no-filename label=t only-matching quiet silent binary-files=t text \
             directories=t devices=t recursive include=t exclude=t exclude-from=r exclude-dir=t \
             files-without-match files-with-matches count initial-tab null before-context=t after-context=t \
             context=t group-separator=t no-group-separator color[=t] colour[=t] binary",
            "extended-regexp fixed-strings basic-regexp perl-regexp regexp file ignore-case no-ignore-case \
             word-regexp line-regexp null-data no-messages invert-match max-count byte-offset line-number \
             line-buffered with-filename no-filename label only-matching quiet silent binary-files text \
             directories devices recursive dereference-recursive include exclude exclude-from exclude-dir \
             files-without-match files-with-matches count initial-tab null before-context after-context context \
             group-separator no-group-separator color colour binary",
            Operands::PatternThenRead(GREP_PATTERN_GIVERS),
        ),
        // Not allowed: `-F`/`--classify`/`--file-type`/`--indicator-style` (in long format ls marks a symlink's
        // target by its type, so a link the tree holds to `~/.ssh` would say it exists) and `--color` (colours
        // from the user's LS_COLORS mark a link whose target is missing).
        "ls" => tool(
            "aAbBcCdfgGhHiklmnNopqQrRsStuUvxXZ1 I:t T:t w:t",
            "all almost-all author escape block-size=t ignore-backups directory \
             format=t full-time group-directories-first no-group human-readable si \
             dereference-command-line dereference-command-line-symlink-to-dir hide=t hyperlink[=t] \
             inode ignore=t kibibytes literal numeric-uid-gid hide-control-chars \
             show-control-chars quote-name quoting-style=t reverse recursive size sort=t time=t time-style=t \
             tabsize=t width=t context zero",
            "all almost-all author escape block-size ignore-backups color directory dired classify file-type format \
             full-time group-directories-first no-group human-readable si dereference-command-line \
             dereference-command-line-symlink-to-dir hide hyperlink indicator-style inode ignore kibibytes literal \
             numeric-uid-gid hide-control-chars show-control-chars quote-name quoting-style reverse recursive size \
             sort time time-style tabsize width context zero dereference",
            Operands::Read,
        ),
        "pwd" => tool("LP", "logical physical", "", Operands::Nothing),
        "stat" => tool(
            "fLt c:t",
            "file-system terse format=t printf=t dereference cached=t",
            "file-system terse format printf dereference cached",
            Operands::Read,
        ),
        "du" => tool(
            "0abcDhHklmsSxP B:t d:t t:t X:r",
            "null all apparent-size block-size=t bytes total dereference-args human-readable inodes max-depth=t \
             no-dereference si separate-dirs summarize one-file-system threshold=t time[=t] time-style=t \
             exclude=t exclude-from=r count-links",
            "null all apparent-size block-size bytes total dereference-args human-readable inodes max-depth \
             no-dereference si separate-dirs summarize one-file-system threshold time time-style exclude \
             exclude-from count-links files0-from dereference",
            Operands::Read,
        ),
        "df" => tool(
            "ahHiklPTv B:t t:t x:t",
            "all block-size=t human-readable si inodes local no-sync sync output[=t] portability print-type total \
             type=t exclude-type=t",
            "all block-size human-readable si inodes local no-sync sync output portability print-type total type \
             exclude-type",
            Operands::Read,
        ),
        "diff" => tool(
            "abBdEiNpqstTuwyZ C:t D:t F:t I:t L:t U:t W:t x:t X:r",
            "normal brief report-identical-files context[=t] unified[=t] ed rcs side-by-side width=t left-column \
             suppress-common-lines show-c-function show-function-line=t label=t expand-tabs initial-tab tabsize=t \
             suppress-blank-empty paginate new-file unidirectional-new-file ignore-case ignore-tab-expansion \
             ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines \
             ignore-matching-lines=t text strip-trailing-cr no-dereference exclude=t exclude-from=r from-file=r \
             to-file=r minimal horizon-lines=t speed-large-files color[=t] palette=t ignore-file-name-case \
             no-ignore-file-name-case",
            "normal brief report-identical-files context unified ed rcs side-by-side width left-column \
             suppress-common-lines show-c-function show-function-line label expand-tabs initial-tab tabsize \
             suppress-blank-empty paginate recursive new-file unidirectional-new-file ignore-case \
             ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines \
             ignore-matching-lines text strip-trailing-cr no-dereference exclude exclude-from starting-file \
             from-file to-file minimal horizon-lines speed-large-files color palette ifdef line-format \
             old-line-format new-line-format unchanged-line-format old-group-format new-group-format \
             changed-group-format unchanged-group-format ignore-file-name-case no-ignore-file-name-case",
            Operands::ReadFiles,
        ),
        "cut" => tool(
            "nsz b:t c:t d:t f:t",
            "bytes=t characters=t delimiter=t fields=t complement only-delimited output-delimiter=t zero-terminated",
            "bytes characters delimiter fields complement only-delimited output-delimiter zero-terminated",
            Operands::Read,
        ),
        "tr" => tool("cCdst", "complement delete squeeze-repeats truncate-set1", "", Operands::Text),
        "basename" => tool("az s:t", "multiple suffix=t zero", "multiple suffix zero", Operands::Text),
        "dirname" => tool("z", "zero", "", Operands::Text),
        "realpath" | "readlink" => tool(
            "eEfmLPqsnvz",
            "canonicalize canonicalize-existing canonicalize-missing logical physical quiet silent strip \
             no-symlinks no-newline verbose zero",
            "canonicalize canonicalize-existing canonicalize-missing logical physical quiet silent strip \
             no-symlinks no-newline verbose zero relative-to relative-base",
            Operands::Read,
        ),
        "true" | "false" | ":" => tool("", "", "", Operands::Text),
        "seq" => tool("w f:t s:t", "equal-width format=t separator=t", "", Operands::Text),
        "sleep" => tool("", "", "", Operands::Text),
        "nproc" => tool("", "all ignore=t", "", Operands::Nothing),
        "whoami" | "tty" | "arch" | "groups" => tool("s", "silent quiet", "", Operands::Text),
        "id" => tool("aZgGnruz", "context group groups name real user zero", "", Operands::Text),
        "uname" => tool(
            "asnrvmpio",
            "all kernel-name nodename kernel-release kernel-version machine processor hardware-platform \
             operating-system",
            "",
            Operands::Nothing,
        ),
        "printenv" => tool("0", "null", "", Operands::Text),
        // A name with a `/` is a path probed; a bare name resolves inside the workspace, where reading is allowed.
        "which" => tool("a", "", "", Operands::Read),
        "whereis" => tool("bmsul", "", "", Operands::Text),
        "type" => tool("afptP", "", "", Operands::Read),
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" | "cksum" => tool(
            "btz l:t a:t",
            "binary text tag zero untagged length=t algorithm=t base64 raw",
            "binary check ignore-missing quiet status strict tag text warn zero untagged length algorithm base64 \
             raw debug",
            Operands::Read,
        ),
        "cmp" => tool("blsz i:t n:t", "print-bytes ignore-initial=t verbose bytes=t quiet silent", "", Operands::Read),
        "comm" => tool(
            "123z",
            "check-order nocheck-order output-delimiter=t total zero-terminated",
            "check-order nocheck-order output-delimiter total zero-terminated",
            Operands::Read,
        ),
        "nl" => tool(
            "p b:t d:t f:t h:t i:t l:t n:t s:t v:t w:t",
            "body-numbering=t section-delimiter=t footer-numbering=t header-numbering=t line-increment=t \
             join-blank-lines=t number-format=t no-renumber number-separator=t starting-line-number=t \
             number-width=t",
            "body-numbering section-delimiter footer-numbering header-numbering line-increment join-blank-lines \
             number-format no-renumber number-separator starting-line-number number-width",
            Operands::Read,
        ),
        "od" => tool(
            "bcdfilosvx w? A:t j:t N:t S:t t:t",
            "address-radix=t endian=t skip-bytes=t read-bytes=t strings[=t] format=t output-duplicates width[=t] \
             traditional",
            "address-radix endian skip-bytes read-bytes strings format output-duplicates width traditional",
            Operands::Read,
        ),
        "hexdump" | "hd" => tool(
            "bcCdovx e:t n:t s:t",
            "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex format=t \
             length=t skip=t no-squeezing",
            "one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal two-bytes-hex format \
             format-file length skip no-squeezing color",
            Operands::Read,
        ),
        "column" => tool(
            "tnxJLRe c:t s:t o:t N:t l:t",
            "table table-noextreme fillrows json keep-empty-lines output-width=t separator=t output-separator=t \
             table-columns=t table-columns-limit=t",
            "",
            Operands::Read,
        ),
        "fold" => tool("bs w:t", "bytes spaces width=t", "bytes spaces width", Operands::Read),
        "paste" => {
            tool("sz d:t", "delimiters=t serial zero-terminated", "delimiters serial zero-terminated", Operands::Read)
        }
        "join" => tool(
            "iz a:t e:t o:t t:t v:t j:t 1:t 2:t",
            "ignore-case check-order nocheck-order header zero-terminated",
            "ignore-case check-order nocheck-order header zero-terminated",
            Operands::Read,
        ),
        "expand" | "unexpand" => {
            tool("ia t:t", "initial tabs=t all first-only", "initial tabs all first-only", Operands::Read)
        }
        "rev" => tool("0", "zero", "", Operands::Read),
        "tac" => tool("br s:t", "before regex separator=t", "before regex separator", Operands::Read),
        "strings" => tool(
            "adfw n:t t:t e:t s:t",
            "all data print-file-name bytes=t radix=t encoding=t include-all-whitespace output-separator=t",
            "all data print-file-name bytes radix encoding include-all-whitespace output-separator target unicode",
            Operands::Read,
        ),
        "uptime" => tool("ps", "pretty since", "", Operands::Nothing),
        "free" => tool("bkmghlLtvw c:t s:t", "bytes kibi mebi gibi human si total wide", "", Operands::Nothing),
        "locale" => tool("acmkv", "all-locales charmaps category-name keyword-name verbose", "", Operands::Text),
        "sort" => tool(
            "bdfgiMhnRrVcCmsuz k:t t:t S:t",
            "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort \
             human-numeric-sort numeric-sort random-sort reverse sort=t version-sort check[=t] debug merge \
             key=t field-separator=t stable unique zero-terminated buffer-size=t parallel=t",
            "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort \
             human-numeric-sort numeric-sort random-sort random-source reverse sort version-sort batch-size check \
             compress-program debug files0-from key merge output stable buffer-size field-separator \
             temporary-directory parallel unique zero-terminated",
            Operands::Read,
        ),
        "uniq" => tool(
            "cdDiuz f:t s:t w:t",
            "count repeated all-repeated[=t] skip-fields=t group[=t] ignore-case skip-chars=t unique \
             zero-terminated check-chars=t",
            "count repeated all-repeated skip-fields group ignore-case skip-chars unique zero-terminated check-chars",
            Operands::ReadAtMost(1),
        ),
        "file" => tool(
            "bchiIklLNprsSv0 e:t F:t P:t",
            "brief mime mime-type mime-encoding apple extension keep-going list dereference no-dereference no-pad \
             print0 preserve-date raw special-files separator=t exclude=t \
             exclude-quiet=t parameter=t",
            "apple brief checking-printout compile debug dereference exclude exclude-quiet extension files-from \
             keep-going list magic-file mime mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox \
             parameter preserve-date print0 raw separator special-files uncompress uncompress-noreport",
            Operands::Read,
        ),
        "date" => tool(
            "uR I? d:t r:r f:r",
            "date=t debug file=r iso-8601[=t] resolution rfc-email rfc-3339=t reference=r universal utc",
            "date debug file iso-8601 resolution rfc-email rfc-3339 reference set universal utc",
            Operands::DateFormat,
        ),
        "rg" => tool(
            "iswxvclnNFUHIoqpSa0 e:t f:r g:t t:t T:t A:t B:t C:t m:t M:t j:t",
            "ignore-case case-sensitive smart-case word-regexp line-regexp invert-match count count-matches \
             files-with-matches files-without-match line-number no-line-number fixed-strings multiline \
             with-filename no-filename no-messages only-matching quiet pretty text null hidden no-ignore \
             no-ignore-vcs no-ignore-parent no-ignore-dot no-ignore-global no-ignore-exclude ignore-file=r \
             glob=t iglob=t type=t type-not=t regexp=t file=r after-context=t before-context=t context=t \
             max-count=t max-columns=t max-depth=t max-filesize=t threads=t files type-list json color=t \
             column vimgrep heading no-heading trim sort=t sortr=t stats binary no-binary unrestricted \
             one-file-system engine=t pcre2 auto-hybrid-regex passthru field-match-separator=t \
             field-context-separator=t replace=t byte-offset crlf null-data no-config",
            "",
            Operands::PatternThenRead(RG_PATTERN_GIVERS),
        ),
        "hostname" => tool("", "", "", Operands::Nothing),
        "mkdir" => tool("pv m:t", "parents verbose mode=t", "mode parents verbose context", Operands::Write),
        "touch" => tool(
            "acfmh d:t t:t r:r",
            "date=t no-create no-dereference reference=r time=t",
            "date no-create no-dereference reference time",
            Operands::Write,
        ),
        "cp" => tool(
            "aRrfinpuvxTbP t:w",
            "archive backup[=t] force interactive no-clobber no-dereference preserve[=t] no-preserve=t recursive \
             reflink[=t] remove-destination sparse=t strip-trailing-slashes target-directory=w \
             no-target-directory update[=t] verbose one-file-system attributes-only",
            "archive attributes-only backup copy-contents dereference force interactive link no-clobber \
             no-dereference preserve no-preserve parents recursive reflink remove-destination sparse \
             strip-trailing-slashes suffix symbolic-link target-directory no-target-directory update verbose \
             one-file-system context debug keep-directory-symlink",
            Operands::Transfer(false),
        ),
        "mv" => tool(
            "finuvTb t:w",
            "backup[=t] force interactive no-clobber strip-trailing-slashes target-directory=w \
             no-target-directory update[=t] verbose",
            "backup context force interactive no-clobber no-copy strip-trailing-slashes suffix target-directory \
             no-target-directory update verbose exchange debug",
            Operands::Transfer(true),
        ),
        _ => return None,
    };
    Some(found)
}
