-- A findings store written by rgpu-fuzz when signatures were text (before Signature values
-- were carried end to end): FindingStore.record of one finding per signature kind, one
-- recheck, one reproduction, one status change; the runs table emptied (no host names).
-- tests/unit/test_store_signature_text.py reads it: stored text and bucket ids must not change.
PRAGMA user_version = 5;
BEGIN TRANSACTION;
CREATE TABLE buckets (
        signature    TEXT PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        kind         TEXT NOT NULL,
        pipelines    TEXT NOT NULL,
        first_seen   REAL NOT NULL,
        last_seen    REAL NOT NULL,
        count        INTEGER NOT NULL DEFAULT 0,
        status       TEXT NOT NULL DEFAULT 'new'
                     CHECK (status IN ('new', 'filed', 'fixed', 'flaky', 'wontfix')),
        best_case_id TEXT REFERENCES cases(id),
        best_tokens  INTEGER,
        best_chars   INTEGER
    , tries INTEGER NOT NULL DEFAULT 0, reproduced INTEGER NOT NULL DEFAULT 0, note TEXT NOT NULL DEFAULT '', first_run TEXT, last_run TEXT, fixed_run TEXT, fixed_at REAL, regressions INTEGER NOT NULL DEFAULT 0);
INSERT INTO "buckets" VALUES('wrong-code|llvm-cpu-xor2or:O0|ops=neg,xor','f73ab06cf7','wrong-code','ref,llvm-cpu-xor2or:O0',1.79660880009117722511e+09,1.79660880009117722511e+09,1,'fixed','647aa83cd807',30,73,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',1.79660880037480354303e+09,0);
INSERT INTO "buckets" VALUES('wrong-code|llvm-cpu-xor2or:O0|probe=xor:int','6be12135ce','wrong-code','ref,llvm-cpu-xor2or:O0',1.79660880012293577194e+09,1.79660880013085365292e+09,2,'new','fa9d33253a6e',30,74,1,1,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('wrong-code|amdgpu-sim:gfx1100:O1|known LLVM bug llvm/llvm-project#186348 (lane-vgpr-implicit-def)','e150496175','wrong-code','ref,amdgpu-sim:gfx1100:O1',1.79660880014302539817e+09,1.79660880014302539817e+09,1,'new','c67042a2b020',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('wrong-code|ref-outvoted|ops=','f65ee67a85','wrong-code','ref,ref-outvoted',1.79660880015699481963e+09,1.79660880017893314361e+09,2,'new','069d0e4407e7',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('trap-mismatch|llvm-cpu:O3|expected div-by-zero, got ok','8b830bfb14','trap-mismatch','ref,llvm-cpu:O3',1.79660880020293021205e+09,1.79660880020293021205e+09,1,'filed','4dfb84e941fb',30,74,0,0,'llvm/llvm-project#1','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('compile-crash|llvm-cpu-sremcrash:O0|codegen|LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.workitem.id.x | x','3e7c2d719a','compile-crash','ref,llvm-cpu-sremcrash:O0',1.79660880022295975678e+09,1.79660880024291419983e+09,2,'new','67cab23bab48',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('run-crash|amdgpu-sim:gfx942:O0|sim-uninit-read','15a114f19e','run-crash','ref,amdgpu-sim:gfx942:O0',1.79660880026689291004e+09,1.79660880026689291004e+09,1,'new','b91f4ea3ac60',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('timeout|llvm-cpu:O0|run','cb4511a157','timeout','ref,llvm-cpu:O0',1.79660880027888941769e+09,1.79660880029890227321e+09,2,'new','aece0475445a',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('nondeterminism|llvm-cpu:O2|object','93b934d270','nondeterminism','ref,llvm-cpu:O2',1.79660880030685448649e+09,1.79660880030685448649e+09,1,'new','6a84d2e4defe',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('pipeline-error|p|IndexError: index N is out of bounds','69cfed8c67','pipeline-error','ref,p',1.79660880031648874282e+09,1.79660880034249448777e+09,2,'new','2566c4face7d',30,74,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
INSERT INTO "buckets" VALUES('invalid-case|ref rejected: step budget | twice','ad9c0df147','invalid-case','ref,ref rejected: step budget ',1.79660880035487818722e+09,1.79660880035487818722e+09,1,'new','35567484fce4',30,75,0,0,'','campaign-20261207T020000Z-40ac6d','campaign-20261207T020000Z-40ac6d',NULL,NULL,0);
CREATE TABLE cases (
        id        TEXT PRIMARY KEY,
        toml      TEXT NOT NULL,
        tokens    INTEGER NOT NULL,
        chars     INTEGER NOT NULL,
        generator TEXT NOT NULL DEFAULT '',
        seed      INTEGER,
        parent    TEXT NOT NULL DEFAULT '',
        added     REAL NOT NULL
    );
INSERT INTO "cases" VALUES('647aa83cd807','format = "rgpu-case/1"
id = "647aa83cd807"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 0u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,73,'',NULL,'',1.79660880009117722511e+09);
INSERT INTO "cases" VALUES('fa9d33253a6e','format = "rgpu-case/1"
id = "fa9d33253a6e"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 10u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880012293577194e+09);
INSERT INTO "cases" VALUES('308137e50fab','format = "rgpu-case/1"
id = "308137e50fab"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 11u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880013085365292e+09);
INSERT INTO "cases" VALUES('c67042a2b020','format = "rgpu-case/1"
id = "c67042a2b020"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 20u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880014302539817e+09);
INSERT INTO "cases" VALUES('069d0e4407e7','format = "rgpu-case/1"
id = "069d0e4407e7"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 30u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880015699481963e+09);
INSERT INTO "cases" VALUES('17687d4e33a5','format = "rgpu-case/1"
id = "17687d4e33a5"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 31u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880017893314361e+09);
INSERT INTO "cases" VALUES('4dfb84e941fb','format = "rgpu-case/1"
id = "4dfb84e941fb"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 40u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880020293021205e+09);
INSERT INTO "cases" VALUES('67cab23bab48','format = "rgpu-case/1"
id = "67cab23bab48"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 50u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880022295975678e+09);
INSERT INTO "cases" VALUES('08c42891d9ab','format = "rgpu-case/1"
id = "08c42891d9ab"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 51u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880024291419983e+09);
INSERT INTO "cases" VALUES('b91f4ea3ac60','format = "rgpu-case/1"
id = "b91f4ea3ac60"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 60u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880026689291004e+09);
INSERT INTO "cases" VALUES('aece0475445a','format = "rgpu-case/1"
id = "aece0475445a"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 70u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880027888941769e+09);
INSERT INTO "cases" VALUES('6f9a25be2fc7','format = "rgpu-case/1"
id = "6f9a25be2fc7"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 71u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880029890227321e+09);
INSERT INTO "cases" VALUES('6a84d2e4defe','format = "rgpu-case/1"
id = "6a84d2e4defe"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 80u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880030685448649e+09);
INSERT INTO "cases" VALUES('2566c4face7d','format = "rgpu-case/1"
id = "2566c4face7d"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 90u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880031648874282e+09);
INSERT INTO "cases" VALUES('088a1b4d07b3','format = "rgpu-case/1"
id = "088a1b4d07b3"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 91u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,74,'',NULL,'',1.79660880034249448777e+09);
INSERT INTO "cases" VALUES('35567484fce4','format = "rgpu-case/1"
id = "35567484fce4"
entry = "k"
pipelines = ["ref", "p"]
kernel = ''''''
use rgpu::*;

#[kernel]
pub fn k(out: &mut [u32]) {
    out[0] = 100u32;
}
''''''

[launch]
grid = [1, 1, 1]
block = [1, 1, 1]

[[args]]
name = "out"
buffer = "u32"
len = 4
init = { fill = 0 }
',30,75,'',NULL,'',1.79660880035487818722e+09);
CREATE TABLE examples (
        bucket  TEXT NOT NULL REFERENCES buckets(signature),
        case_id TEXT NOT NULL REFERENCES cases(id),
        tokens  INTEGER NOT NULL,
        chars   INTEGER NOT NULL,
        seen    REAL NOT NULL,
        detail  TEXT NOT NULL DEFAULT '',
        diffs   TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (bucket, case_id)
    );
INSERT INTO "examples" VALUES('wrong-code|llvm-cpu-xor2or:O0|ops=neg,xor','647aa83cd807',30,73,1.79660880009117722511e+09,'detail 0','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('wrong-code|llvm-cpu-xor2or:O0|probe=xor:int','fa9d33253a6e',30,74,1.79660880012293577194e+09,'detail 1','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('wrong-code|llvm-cpu-xor2or:O0|probe=xor:int','308137e50fab',30,74,1.79660880013085365292e+09,'detail 1','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('wrong-code|amdgpu-sim:gfx1100:O1|known LLVM bug llvm/llvm-project#186348 (lane-vgpr-implicit-def)','c67042a2b020',30,74,1.79660880014302539817e+09,'detail 2','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('wrong-code|ref-outvoted|ops=','069d0e4407e7',30,74,1.79660880015699481963e+09,'detail 3','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('wrong-code|ref-outvoted|ops=','17687d4e33a5',30,74,1.79660880017893314361e+09,'detail 3','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('trap-mismatch|llvm-cpu:O3|expected div-by-zero, got ok','4dfb84e941fb',30,74,1.79660880020293021205e+09,'detail 4','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('compile-crash|llvm-cpu-sremcrash:O0|codegen|LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.workitem.id.x | x','67cab23bab48',30,74,1.79660880022295975678e+09,'detail 5','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('compile-crash|llvm-cpu-sremcrash:O0|codegen|LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.workitem.id.x | x','08c42891d9ab',30,74,1.79660880024291419983e+09,'detail 5','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('run-crash|amdgpu-sim:gfx942:O0|sim-uninit-read','b91f4ea3ac60',30,74,1.79660880026689291004e+09,'detail 6','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('timeout|llvm-cpu:O0|run','aece0475445a',30,74,1.79660880027888941769e+09,'detail 7','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('timeout|llvm-cpu:O0|run','6f9a25be2fc7',30,74,1.79660880029890227321e+09,'detail 7','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('nondeterminism|llvm-cpu:O2|object','6a84d2e4defe',30,74,1.79660880030685448649e+09,'detail 8','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('pipeline-error|p|IndexError: index N is out of bounds','2566c4face7d',30,74,1.79660880031648874282e+09,'detail 9','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('pipeline-error|p|IndexError: index N is out of bounds','088a1b4d07b3',30,74,1.79660880034249448777e+09,'detail 9','[["out", 0, "1", 1, "3", 3]]');
INSERT INTO "examples" VALUES('invalid-case|ref rejected: step budget | twice','35567484fce4',30,75,1.79660880035487818722e+09,'detail 10','[["out", 0, "1", 1, "3", 3]]');
CREATE TABLE history (
        bucket TEXT NOT NULL REFERENCES buckets(signature),
        run    TEXT NOT NULL REFERENCES runs(id),
        at     REAL NOT NULL,
        event  TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (bucket, run, event)
    );
INSERT INTO "history" VALUES('wrong-code|llvm-cpu-xor2or:O0|ops=neg,xor','campaign-20261207T020000Z-40ac6d',1.79660880037480354303e+09,'fixed','agrees');
CREATE TABLE outcomes (
        case_id  TEXT NOT NULL REFERENCES cases(id),
        pipeline TEXT NOT NULL,
        summary  TEXT NOT NULL,
        PRIMARY KEY (case_id, pipeline)
    );
INSERT INTO "outcomes" VALUES('647aa83cd807','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('647aa83cd807','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('fa9d33253a6e','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('fa9d33253a6e','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('308137e50fab','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('308137e50fab','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('c67042a2b020','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('c67042a2b020','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('069d0e4407e7','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('069d0e4407e7','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('17687d4e33a5','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('17687d4e33a5','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('4dfb84e941fb','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('4dfb84e941fb','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('67cab23bab48','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('67cab23bab48','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('08c42891d9ab','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('08c42891d9ab','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('b91f4ea3ac60','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('b91f4ea3ac60','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('aece0475445a','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('aece0475445a','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('6f9a25be2fc7','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('6f9a25be2fc7','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('6a84d2e4defe','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('6a84d2e4defe','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('2566c4face7d','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('2566c4face7d','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('088a1b4d07b3','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('088a1b4d07b3','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
INSERT INTO "outcomes" VALUES('35567484fce4','ref','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "390401748a789fa6"}}}');
INSERT INTO "outcomes" VALUES('35567484fce4','p','{"status": "ok", "detail": "", "seconds": 0, "stages": {}, "artefacts": {}, "outputs": {"out": {"type": "u32", "len": 4, "sha256": "21ea949b6280c47e"}}}');
CREATE TABLE plugins (
        pipeline TEXT PRIMARY KEY,
        path     TEXT NOT NULL,
        sha256   TEXT NOT NULL
    );
CREATE TABLE probes (
        toolchain TEXT NOT NULL,
        pipeline  TEXT NOT NULL,
        op        TEXT NOT NULL,
        broken    INTEGER NOT NULL,
        run       TEXT,
        at        REAL NOT NULL,
        PRIMARY KEY (toolchain, pipeline, op)
    );
CREATE TABLE runs (
        id        TEXT PRIMARY KEY,
        kind      TEXT NOT NULL,
        started   REAL NOT NULL,
        ended     REAL,
        pipelines TEXT NOT NULL DEFAULT '',
        versions  TEXT NOT NULL DEFAULT '{}',
        host      TEXT NOT NULL DEFAULT '',
        settings  TEXT NOT NULL DEFAULT '{}'
    );
CREATE INDEX examples_by_case ON examples(case_id);
CREATE INDEX buckets_by_last_seen ON buckets(last_seen);
COMMIT;
