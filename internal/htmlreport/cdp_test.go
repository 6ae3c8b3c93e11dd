package htmlreport

// A headless Chromium driven over the Chrome DevTools Protocol, with just
// enough of a WebSocket client (RFC 6455, text frames, client masking) to
// talk to it, so that the tests need nothing from outside the standard
// library.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/pathprof/pathprof/internal/chromium"
)

// browser is one headless Chromium with one page attached.
type browser struct {
	ws   *wsConn
	next int
}

// startBrowser starts Chromium with a fresh profile directory and connects
// to its first page.
func startBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	stderr := chromium.Start(t, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	b := &browser{}
	t.Cleanup(b.close)

	// Chromium says where it listens on stderr; the rest of its chatter
	// (D-Bus, GPU) is kept for the failure message.
	found := make(chan string, 1)
	var log bytes.Buffer
	go func() {
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			} else if log.Len() < 8000 {
				log.WriteString(sc.Text() + "\n")
			}
		}
		close(found)
	}()
	var browserURL string
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("chromium exited before listening:\n%s", log.String())
		}
		browserURL = u
	case <-time.After(60 * time.Second):
		t.Fatalf("chromium did not start listening within a minute:\n%s", log.String())
	}
	u, err := url.Parse(browserURL)
	if err != nil {
		t.Fatal(err)
	}
	// The page's own endpoint takes page commands directly; the browser's
	// would need the page attached and named in every command.
	var targets []struct {
		Type, URL            string
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	resp, err := http.Get("http://" + u.Host + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&targets)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			if b.ws, err = dialWS(tg.WebSocketDebuggerURL); err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("chromium has no page: %+v", targets)
	return nil
}

func (b *browser) close() {
	if b.ws != nil {
		b.ws.conn.Close()
	}
}

// call sends one command and waits for its answer, dropping the events
// that come before it.
func (b *browser) call(method string, params any) (json.RawMessage, error) {
	b.next++
	id := b.next
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := b.ws.writeText(msg); err != nil {
		return nil, err
	}
	b.ws.conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	for {
		data, err := b.ws.readMessage()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", method, err)
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return nil, err
		}
		if resp.ID != id {
			continue
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, resp.Error.Message)
		}
		return resp.Result, nil
	}
}

// eval evaluates a JavaScript expression in the page and decodes its
// value (returned by value, so it must be JSON-like) into out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	res, err := b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.Exception != nil {
		t.Fatalf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// waitFor polls a JavaScript condition until it is true and returns how
// long that took.
func (b *browser) waitFor(t *testing.T, cond string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var ok bool
		b.eval(t, "!!("+cond+")", &ok)
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("still not %s after %v", cond, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// open loads a page and waits until its script has drawn the first view.
func (b *browser) open(t *testing.T, pageURL string) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := b.call("Page.navigate", map[string]any{"url": pageURL}); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "document.body && document.body.dataset.ready === '1' && location.href === "+jsString(pageURL), 2*time.Minute)
	return time.Since(start)
}

// click clicks, as a mouse would, the middle of the first element that
// selector matches, after scrolling it into view.
func (b *browser) click(t *testing.T, selector string) {
	t.Helper()
	var at []float64
	b.eval(t, `(() => { const e = document.querySelector(`+jsString(selector)+`); if (!e) return null;
		e.scrollIntoView({block: 'center', inline: 'center'}); const r = e.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2]; })()`, &at)
	if len(at) != 2 {
		t.Fatalf("nothing to click: %s", selector)
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": at[0], "y": at[1], "button": "left", "clickCount": 1}
		if typ == "mouseMoved" {
			p["button"] = "none"
		}
		if _, err := b.call("Input.dispatchMouseEvent", p); err != nil {
			t.Fatal(err)
		}
	}
}

// screenshot saves the viewport as a PNG.
func (b *browser) screenshot(t *testing.T, file string) {
	t.Helper()
	res, err := b.call("Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Data []byte }
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, r.Data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// wsConn is the client end of a WebSocket connection.
type wsConn struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialWS(rawURL string) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	k := base64.StdEncoding.EncodeToString(key)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, k)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	resp.Body.Close()
	sum := sha1.Sum([]byte(k + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake with %s: %s", rawURL, resp.Status)
	}
	return &wsConn{conn: conn, r: r}, nil
}

// writeFrame writes one final frame; a client must mask what it sends.
func (c *wsConn) writeFrame(opcode byte, payload []byte) error {
	hdr := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	masked := make([]byte, len(payload))
	for i, b := range payload {
		masked[i] = b ^ mask[i%4]
	}
	_, err := c.conn.Write(append(hdr, masked...))
	return err
}

func (c *wsConn) writeText(msg []byte) error { return c.writeFrame(0x1, msg) }

// readMessage returns the next text or binary message, joining
// fragments and answering pings on the way.
func (c *wsConn) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		fin, opcode := h[0]&0x80 != 0, h[0]&0x0F
		n := uint64(h[1] & 0x7F)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var mask []byte
		if h[1]&0x80 != 0 {
			mask = make([]byte, 4)
			if _, err := io.ReadFull(c.r, mask); err != nil {
				return nil, err
			}
		}
		if n > 1<<30 {
			return nil, fmt.Errorf("websocket frame of %d bytes", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.r, payload); err != nil {
			return nil, err
		}
		if mask != nil {
			for i := range payload {
				payload[i] ^= mask[i%4]
			}
		}
		switch opcode {
		case 0x8:
			return nil, fmt.Errorf("websocket closed by the browser")
		case 0x9:
			if err := c.writeFrame(0xA, payload); err != nil {
				return nil, err
			}
			continue
		case 0xA:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

// fileURL is the file: URL of a local path.
func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: path}).String()
}
