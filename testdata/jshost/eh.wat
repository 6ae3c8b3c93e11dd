;; A module only a JavaScript host runs: it imports env.print, which no
;; WASI runtime provides, and catches exceptions with the legacy
;; instructions (try, catch) that clang's and emscripten's
;; -fwasm-exceptions emit and wazero does not run. run(n) calls catcher(i)
;; for i below n: thrower(i) throws i when i % 3 is not 0, catcher returns
;; what was thrown (or 0), and run prints the sum.
(module
  (import "env" "print" (func $print (param i32)))
  (tag $e (param i32))
  (func $thrower (param $i i32)
    local.get $i
    i32.const 3
    i32.rem_u
    if
      local.get $i
      throw $e
    end)
  (func $catcher (param $i i32) (result i32)
    try (result i32)
      local.get $i
      call $thrower
      i32.const 0
    catch $e
    end)
  (func $run (export "run") (param $n i32) (result i32)
    (local $i i32) (local $sum i32)
    loop $next
      local.get $sum
      local.get $i
      call $catcher
      i32.add
      local.set $sum
      local.get $i
      i32.const 1
      i32.add
      local.tee $i
      local.get $n
      i32.lt_u
      br_if $next
    end
    local.get $sum
    call $print
    local.get $sum))
