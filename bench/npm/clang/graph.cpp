// The input clang compiles in the benchmark: ordinary C++ with standard
// containers and algorithms, virtual functions and templates, so that the
// compiler parses, instantiates and optimises a realistic amount of code.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
	virtual std::string name() const = 0;
};

struct Rect : Shape {
	double w, h;
	Rect(double w, double h) : w(w), h(h) {}
	double area() const override { return w * h; }
	std::string name() const override { return "rect"; }
};

struct Circle : Shape {
	double r;
	explicit Circle(double r) : r(r) {}
	double area() const override { return 3.14159265358979 * r * r; }
	std::string name() const override { return "circle"; }
};

template <typename T> struct Graph {
	std::vector<std::vector<std::pair<int, T>>> adj;
	explicit Graph(int n) : adj(n) {}
	void add(int u, int v, T w) { adj[u].push_back({v, w}); }
	std::vector<T> dijkstra(int src) const {
		std::vector<T> dist(adj.size(), std::numeric_limits<T>::max());
		using Item = std::pair<T, int>;
		std::vector<Item> q{{0, src}};
		dist[src] = 0;
		while (!q.empty()) {
			std::pop_heap(q.begin(), q.end(), std::greater<Item>());
			auto [d, u] = q.back();
			q.pop_back();
			if (d > dist[u])
				continue;
			for (auto [v, w] : adj[u])
				if (d + w < dist[v]) {
					dist[v] = d + w;
					q.push_back({dist[v], v});
					std::push_heap(q.begin(), q.end(), std::greater<Item>());
				}
		}
		return dist;
	}
};

template <typename K, typename V> std::map<V, std::vector<K>> invert(const std::map<K, V> &m) {
	std::map<V, std::vector<K>> out;
	for (auto &[k, v] : m)
		out[v].push_back(k);
	for (auto &[v, ks] : out)
		std::sort(ks.begin(), ks.end());
	return out;
}

int main() {
	std::vector<std::unique_ptr<Shape>> shapes;
	for (int i = 0; i < 100; i++) {
		if (i % 3)
			shapes.push_back(std::make_unique<Rect>(i, i + 1));
		else
			shapes.push_back(std::make_unique<Circle>(i));
	}
	std::stable_sort(shapes.begin(), shapes.end(), [](auto &a, auto &b) { return a->area() < b->area(); });
	std::map<std::string, double> byName;
	for (auto &s : shapes)
		byName[s->name()] += s->area();
	Graph<long> g(1000);
	for (int i = 0; i < 1000; i++)
		for (int k = 1; k <= 4; k++)
			g.add(i, (i * 7 + k * 13) % 1000, (i * k) % 17 + 1);
	auto d = g.dijkstra(0);
	std::map<std::string, int> words;
	for (int i = 0; i < 500; i++)
		words["w" + std::to_string(i % 37)] += i;
	auto inv = invert(words);
	long total = 0;
	for (long x : d)
		total += x;
	std::printf("%zu %.1f %ld %zu\n", shapes.size(), byName["rect"], total, inv.size());
	return 0;
}
